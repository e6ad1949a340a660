// The cells policy head's gather (the TypeScript twin of the GPU kernels): each move's logit is
// the sum of the head's score planes at the move's cells plus a move-kind bias, read through a
// per-position move table of (moveIndex, a, b, slot) entries. Every logit no entry names is 0.
// Each moveIndex appears at most once per position (distinct legal moves have distinct policy
// indices): the forward writes, it does not add, so a repeated index would keep its last entry.
import { KibitzError } from "../../errors.ts";
import { type CpuTensor, cpuTensor, shapeString } from "../tensor.ts";

/** Shape facts of a cells gather: batch, values per position of q, table width, bias count. */
function cellGeometry(q: CpuTensor, table: CpuTensor, biases: number) {
  const n = q.shape[0];
  if (table.shape.length !== 3 || table.shape[0] !== n || table.shape[2] !== 4) {
    throw new KibitzError(
      "shape_mismatch",
      `move table shape ${shapeString(table.shape)}, expected ${n}xWx4 (batch of ${n})`,
    );
  }
  return { n, per: q.data.length / n, w: table.shape[1], biases };
}

/** Throws bad_batch unless entry (m, a, b, slot) of position `row` indexes q, the logits and bias. */
function checkEntry(
  row: number,
  m: number,
  a: number,
  b: number,
  s: number,
  moves: number,
  per: number,
  biases: number,
): void {
  const ok = (v: number, hi: number) => Number.isInteger(v) && v >= -1 && v < hi;
  if (!ok(m, moves) || !ok(a, per) || !ok(b, per) || !ok(s, biases)) {
    throw new KibitzError(
      "bad_batch",
      `move table entry (${m}, ${a}, ${b}, ${s}) of position ${row} is out of range ` +
        `(moves ${moves}, cells ${per}, biases ${biases}; -1 for none)`,
    );
  }
}

/**
 * Cells head logits [B, moves]: logits[n, m] = q[n, a] + q[n, b] + bias[slot] for each table entry
 * (m, a, b, slot) of position n with m >= 0 (a, b, slot of -1 add nothing); unnamed logits are 0.
 */
export function cellLogits(
  q: CpuTensor,
  table: CpuTensor,
  bias: CpuTensor,
  moves: number,
): CpuTensor {
  const { n, per, w, biases } = cellGeometry(q, table, bias.data.length);
  const out = cpuTensor([n, moves]);
  const qd = q.data, td = table.data, bd = bias.data, od = out.data;
  for (let r = 0; r < n; r++) {
    const qo = r * per;
    for (let j = 0; j < w; j++) {
      const e = (r * w + j) * 4;
      const m = td[e];
      if (m === -1) continue;
      const a = td[e + 1], b = td[e + 2], s = td[e + 3];
      checkEntry(r, m, a, b, s, moves, per, biases);
      od[r * moves + m] = (a >= 0 ? qd[qo + a] : 0) + (b >= 0 ? qd[qo + b] : 0) +
        (s >= 0 ? bd[s] : 0);
    }
  }
  return out;
}

/**
 * Backward of cellLogits: dq[n, a] and dq[n, b] gather dlogits[n, m] of every entry naming them,
 * dbias[slot] the sum over the batch (written into dbias); returns dq (shaped like q).
 */
export function cellLogitsBackward(
  q: CpuTensor,
  table: CpuTensor,
  dlogits: CpuTensor,
  dbias: CpuTensor,
): CpuTensor {
  const { n, per, w, biases } = cellGeometry(q, table, dbias.data.length);
  const moves = dlogits.data.length / n;
  const dq = cpuTensor(q.shape);
  const td = table.data, gd = dlogits.data, qd = dq.data, bd = dbias.data;
  bd.fill(0);
  for (let r = 0; r < n; r++) {
    const qo = r * per;
    for (let j = 0; j < w; j++) {
      const e = (r * w + j) * 4;
      const m = td[e];
      if (m === -1) continue;
      const a = td[e + 1], b = td[e + 2], s = td[e + 3];
      checkEntry(r, m, a, b, s, moves, per, biases);
      const g = gd[r * moves + m];
      if (a >= 0) qd[qo + a] += g;
      if (b >= 0) qd[qo + b] += g;
      if (s >= 0) bd[s] += g;
    }
  }
  return dq;
}

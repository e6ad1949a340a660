import type { NnBackend, SgdHyper } from "./backend.ts";
import type { BnParams } from "./cpu/batchnorm.ts";
import type { NetConfig } from "./config.ts";
import type { ParamSpec } from "./params.ts";
import type { Shaped } from "./tensor.ts";
import { KibitzError } from "../errors.ts";

/** The model's tensors on one backend: parameters, and (for training) gradients and velocities. */
export interface NetTensors<T extends Shaped> {
  config: NetConfig;
  specs: ParamSpec[];
  params: Map<string, T>;
  grads: Map<string, T> | null;
  velocity: Map<string, T> | null;
}

/**
 * Inputs of one pass: planes [B, C, H, W], legal mask [B, moves], optional targets, and for a cells
 * net the move table [B, W, 4] (see NnBackend.cellLogits; null for the fully connected head).
 */
export interface PassInputs<T> {
  x: T;
  mask: T;
  policyTarget: T | null;
  valueTarget: T | null;
  moveCells?: T | null;
}

/** Outputs of one pass: masked move probabilities, values, and per-row losses when targets exist. */
export interface PassOutputs<T> {
  probs: T;
  value: T;
  policyLoss: T | null;
  valueLoss: T | null;
}

/** Runs the ResNet forward, and when `train` is set also backward and one SGD step. */
export function runPass<T extends Shaped>(
  b: NnBackend<T>,
  net: NetTensors<T>,
  inp: PassInputs<T>,
  train: SgdHyper | null,
): PassOutputs<T> {
  const P = (n: string): T => {
    const t = net.params.get(n);
    if (!t) throw new Error(`missing tensor ${n}`);
    return t;
  };
  const G = (n: string): T => {
    const t = net.grads?.get(n);
    if (!t) throw new Error(`missing gradient ${n}`);
    return t;
  };
  const bnp = (n: string): BnParams<T> => ({
    gamma: P(`${n}.gamma`),
    beta: P(`${n}.beta`),
    runMean: P(`${n}.mean`),
    runVar: P(`${n}.var`),
  });
  const isTrain = train !== null;
  const free = (...ts: (T | null)[]) => {
    for (const t of ts) if (t) b.release(t);
  };

  // conv -> BN -> ReLU (one fused op after the conv); saves (c, stats, y) on the tape in training.
  const cbr = (x: T, conv: string, bn: string) => {
    const c = b.conv2d(x, P(conv));
    const { y, stats } = b.batchNormRelu(c, bnp(bn), isTrain, null);
    if (!isTrain) free(c, stats);
    return { c, stats, y };
  };
  // Backward of cbr from dy (+ dy2, a second gradient into y, added inside the fused op).
  const cbrBack = (
    x: T,
    s: { c: T; stats: T; y: T },
    dy: T,
    dy2: T | null,
    conv: string,
    bn: string,
    needDx: boolean,
  ): T | null => {
    const { dx: dc } = b.batchNormReluBackward(
      s.c,
      s.y,
      dy,
      dy2,
      s.stats,
      P(`${bn}.gamma`),
      G(`${bn}.gamma`),
      G(`${bn}.beta`),
      false,
    );
    const dx = b.conv2dBackward(x, P(conv), dc, G(conv), needDx);
    free(dc, s.c, s.stats);
    return dx;
  };

  // Tower.
  b.mark?.(isTrain ? "forward" : "inference");
  const stem = cbr(inp.x, "stem.conv", "stem.bn");
  let h = stem.y;
  const tape: { x0: T; r1: { c: T; stats: T; y: T }; c2: T; s2: T; out: T }[] = [];
  for (let i = 0; i < net.config.blocks; i++) {
    const x0 = h;
    const r1 = cbr(x0, `block${i}.conv1`, `block${i}.bn1`);
    const c2 = b.conv2d(r1.y, P(`block${i}.conv2`));
    // BN, the residual add and ReLU in one pass over c2 (out also gives ReLU's backward mask).
    const { y: out, stats: s2 } = b.batchNormRelu(c2, bnp(`block${i}.bn2`), isTrain, x0);
    if (isTrain) tape.push({ x0, r1, c2, s2, out });
    else free(r1.y, c2, s2, x0);
    h = out;
  }

  // Heads. The cells head: per-cell score planes q, each move's logit gathered by the move table.
  const cells = net.config.cells !== undefined;
  const table = inp.moveCells ?? null;
  if (cells && !table) {
    throw new KibitzError("bad_batch", "a cells-head network needs the batch's move table");
  }
  const pol = cbr(h, "policy.conv", "policy.bn");
  const q = cells ? b.conv2d(pol.y, P("policy.cells.w")) : null;
  const logits = q
    ? b.cellLogits(q, table!, P("policy.cells.b"), net.config.moves)
    : b.linear(pol.y, P("policy.fc.w"), P("policy.fc.b"));
  const pl = b.policyLoss(logits, inp.mask, inp.policyTarget);
  free(logits);
  if (q && !isTrain) free(q);
  // The value head: the board-wide one reads the value plane whole; the pooled one
  // (config.valuePool) each value channel's mean over the board.
  const val = cbr(h, "value.conv", "value.bn");
  const pooled = net.config.valuePool ? b.meanPool(val.y) : null;
  const f1 = b.linear(pooled ?? val.y, P("value.fc1.w"), P("value.fc1.b"));
  const f1r = b.relu(f1);
  free(f1);
  const z = b.linear(f1r, P("value.fc2.w"), P("value.fc2.b"));
  const vl = b.valueLoss(z, inp.valueTarget);
  free(z);
  const outputs: PassOutputs<T> = {
    probs: pl.probs,
    value: vl.value,
    policyLoss: pl.loss,
    valueLoss: vl.loss,
  };
  if (!isTrain) {
    free(pol.y, val.y, f1r, h, pooled);
    return outputs;
  }
  if (!pl.dlogits || !vl.dz) throw new Error("training needs policy and value targets");

  // Backward: heads, then the tower in reverse.
  b.mark?.("backward: heads");
  let dpy: T;
  if (q) {
    const dq = b.cellLogitsBackward(q, table!, pl.dlogits, G("policy.cells.b"));
    free(pl.dlogits, q);
    dpy = b.conv2dBackward(pol.y, P("policy.cells.w"), dq, G("policy.cells.w"), true)!;
    free(dq);
  } else {
    dpy = b.linearBackward(
      pol.y,
      P("policy.fc.w"),
      pl.dlogits,
      G("policy.fc.w"),
      G("policy.fc.b"),
      true,
    )!;
    free(pl.dlogits);
  }
  const dhp = cbrBack(h, pol, dpy, null, "policy.conv", "policy.bn", true)!;
  free(dpy, pol.y);
  const df1r = b.linearBackward(
    f1r,
    P("value.fc2.w"),
    vl.dz,
    G("value.fc2.w"),
    G("value.fc2.b"),
    true,
  )!;
  free(vl.dz);
  const df1 = b.reluBackward(f1r, df1r);
  free(df1r, f1r);
  const dvp = b.linearBackward(
    pooled ?? val.y,
    P("value.fc1.w"),
    df1,
    G("value.fc1.w"),
    G("value.fc1.b"),
    true,
  )!;
  free(df1);
  let dvy = dvp;
  if (pooled) {
    dvy = b.meanPoolBackward(val.y, dvp);
    free(dvp, pooled);
  }
  const dhv = cbrBack(h, val, dvy, null, "value.conv", "value.bn", true)!;
  free(dvy, val.y);
  // The gradient into h (and into each block's input) stays a pair of tensors: the ops that read
  // it (batchNormReluBackward) add the two, so no separate add pass runs.
  let dh = dhp, dh2 = dhv;
  b.mark?.("backward: tower");
  for (let i = net.config.blocks - 1; i >= 0; i--) {
    const t = tape[i];
    const { dx: dc2, dz: da } = b.batchNormReluBackward(
      t.c2,
      t.out,
      dh,
      dh2,
      t.s2,
      P(`block${i}.bn2.gamma`),
      G(`block${i}.bn2.gamma`),
      G(`block${i}.bn2.beta`),
      true,
    );
    free(dh, dh2, t.out);
    const dr1 = b.conv2dBackward(t.r1.y, P(`block${i}.conv2`), dc2, G(`block${i}.conv2`), true)!;
    free(dc2, t.c2, t.s2);
    const dx0 = cbrBack(t.x0, t.r1, dr1, null, `block${i}.conv1`, `block${i}.bn1`, true)!;
    free(dr1, t.r1.y);
    dh = dx0;
    dh2 = da!;
  }
  cbrBack(inp.x, stem, dh, dh2, "stem.conv", "stem.bn", false);
  free(dh, dh2, stem.y);

  // SGD on every trainable tensor.
  b.mark?.("optimizer (SGD)");
  for (const s of net.specs) {
    if (s.trainable) b.sgd(P(s.name), G(s.name), net.velocity!.get(s.name)!, train);
  }
  return outputs;
}

// The CPU twin of f16-storage inference: the fused graph with every value the GPU stores as f16
// (the stem's input, folded conv weights, every conv output and so every residual) rounded to the
// nearest f16, and f32 everywhere else (biases, accumulation, heads' FC layers, softmax, tanh).
import { CpuBackend } from "./cpu_backend.ts";
import { foldBn } from "./cpu/fused.ts";
import type { FusedBackend } from "./graph_fused.ts";
import { CELLS_CONV, foldedLayers, runFusedInference } from "./graph_fused.ts";
import type { NetBatch, NetOutputs } from "./net.ts";
import type { NetWeights } from "./params.ts";
import { planesF32 } from "./planes.ts";
import { type CpuTensor, cpuTensor } from "./tensor.ts";

/**
 * Rounds x to the nearest IEEE binary16 value (ties to even; past 65504 to infinity), exactly;
 * the fallback where the runtime has no Math.f16round.
 */
export function f16roundSoft(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  const ulp = 2 ** (Math.max(e, -14) - 10);
  const q = a / ulp, fl = Math.floor(q), d = q - fl;
  const r = d > 0.5 || (d === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
  const v = r * ulp;
  return (x < 0 ? -1 : 1) * (v > 65504 ? Infinity : v);
}

const native = (Math as { f16round?: (x: number) => number }).f16round;

/** Rounds x to the nearest f16 (Math.f16round where the runtime has it, else f16roundSoft). */
export const f16round: (x: number) => number = native ?? f16roundSoft;

/** A copy of t with every value rounded to f16. */
export function roundF16(t: CpuTensor): CpuTensor {
  const out = cpuTensor(t.shape);
  for (let i = 0; i < t.data.length; i++) out.data[i] = f16round(t.data[i]);
  return out;
}

/**
 * The fused CPU backend with f16 rounding where the GPU's f16 plan stores f16: conv inputs, weights
 * and residuals (idempotent for values already rounded) and conv outputs.
 */
export class F16TwinBackend implements FusedBackend<CpuTensor> {
  private readonly cpu = new CpuBackend();

  convFused(x: CpuTensor, w: CpuTensor, bias: CpuTensor, res: CpuTensor | null, relu: boolean) {
    const r = res ? roundF16(res) : null;
    return roundF16(this.cpu.convFused(roundF16(x), roundF16(w), bias, r, relu));
  }
  linear(x: CpuTensor, w: CpuTensor, bias: CpuTensor) {
    return this.cpu.linear(x, w, bias);
  }
  cellLogits(q: CpuTensor, table: CpuTensor, bias: CpuTensor, moves: number) {
    return this.cpu.cellLogits(q, table, bias, moves);
  }
  meanPool(x: CpuTensor) {
    return this.cpu.meanPool(x);
  }
  relu(x: CpuTensor) {
    return this.cpu.relu(x);
  }
  policyLoss(logits: CpuTensor, mask: CpuTensor, target: CpuTensor | null) {
    return this.cpu.policyLoss(logits, mask, target);
  }
  valueLoss(z: CpuTensor, target: CpuTensor | null) {
    return this.cpu.valueLoss(z, target);
  }
  release(): void {}
}

/**
 * CPU inference through the fused graph: with `f16` the twin of the GPU's f16-storage plan, without
 * it the f32 fused reference.
 */
export function cpuFusedInfer(weights: NetWeights, batch: NetBatch, f16: boolean): NetOutputs {
  const cfg = weights.config, T = (n: string) => weights.tensors.get(n)!;
  const folded = new Map(
    foldedLayers(cfg).map(([conv, bn]) => [
      conv,
      foldBn(T(conv), T(`${bn}.gamma`), T(`${bn}.beta`), T(`${bn}.mean`), T(`${bn}.var`)),
    ]),
  );
  if (cfg.cells) folded.set(CELLS_CONV, { w: T(CELLS_CONV), b: cpuTensor([cfg.cells.planes]) });
  const x = cpuTensor([batch.size, cfg.planes, cfg.height, cfg.width], planesF32(batch.planes));
  const mask = cpuTensor(
    [batch.size, cfg.moves],
    batch.mask ?? new Float32Array(batch.size * cfg.moves).fill(1),
  );
  const b = f16 ? new F16TwinBackend() : new CpuBackend();
  const cells = cfg.cells && batch.moveCells
    ? cpuTensor([batch.size, batch.moveCellsWidth!, 4], batch.moveCells)
    : null;
  const out = runFusedInference(b, cfg, weights.tensors, folded, x, mask, cells);
  return { probs: out.probs.data, value: out.value.data };
}

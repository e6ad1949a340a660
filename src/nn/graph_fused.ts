import { KibitzError } from "../errors.ts";
import type { NetConfig } from "./config.ts";
import type { PassOutputs } from "./graph.ts";
import type { Shaped } from "./tensor.ts";

/**
 * The fused conv that reads a fused conv's output next (its filter transform, if it has one), and
 * whether that output has other readers. A backend may hand the next conv its input already
 * transformed (GpuRecorder's Winograd bridge); with keepY false the output itself may then stay
 * unwritten, and only that next conv may read it.
 */
export interface ChainNext<T> {
  u: T | null;
  keepY: boolean;
}

/** The ops of the fused inference graph (both backends implement them). */
export interface FusedBackend<T extends Shaped> {
  /** y = act(conv(x, w) + bias[co] + res): a conv with its batch norm folded in, bias, residual, ReLU. */
  convFused(
    x: T,
    w: T,
    bias: T,
    res: T | null,
    relu: boolean,
    u?: T | null,
    next?: ChainNext<T> | null,
  ): T;
  linear(x: T, w: T, bias: T): T;
  /** The cells head's gather (NnBackend.cellLogits). */
  cellLogits(q: T, table: T, bias: T, moves: number): T;
  /** Each channel's mean over the board (NnBackend.meanPool): the pooled value head. */
  meanPool(x: T): T;
  relu(x: T): T;
  policyLoss(logits: T, mask: T, target: T | null): { probs: T };
  valueLoss(z: T, target: T | null): { value: T };
  release(t: T): void;
  /** Marks where a phase of the pass begins (recorders keep it for per-phase GPU timing). */
  mark?(phase: string): void;
}

/**
 * A convolution with its batch norm folded in: weight [Co, Ci, K, K] and bias [Co], and for 3x3
 * layers optionally the Winograd transform of the weight ([(m+2)^2, Co, Ci]).
 */
export interface FoldedConv<T> {
  w: T;
  b: T;
  u?: T | null;
}

/** Every (conv, batch norm) pair of the model, the pairs that fold into one fused conv. */
export function foldedLayers(cfg: NetConfig): [conv: string, bn: string][] {
  const out: [string, string][] = [["stem.conv", "stem.bn"]];
  for (let i = 0; i < cfg.blocks; i++) {
    out.push([`block${i}.conv1`, `block${i}.bn1`], [`block${i}.conv2`, `block${i}.bn2`]);
  }
  out.push(["policy.conv", "policy.bn"], ["value.conv", "value.bn"]);
  return out;
}

/**
 * The stem and tower convs in order, each with the conv that reads its output next and whether its
 * output has other readers (the stem's and each block's output: the next block's residual, the
 * heads; a block's inner activation has none). runFusedInference passes these as `next`.
 */
export function towerChain(
  cfg: NetConfig,
): { conv: string; next: string | null; keepY: boolean }[] {
  const convs = ["stem.conv"];
  for (let i = 0; i < cfg.blocks; i++) convs.push(`block${i}.conv1`, `block${i}.conv2`);
  return convs.map((conv, i) => ({
    conv,
    next: convs[i + 1] ?? null,
    keepY: !conv.endsWith(".conv1"),
  }));
}

/**
 * The cells head's score conv (a 1x1 conv with no batch norm): in the folded map of a cells net it
 * is the weight as it is with a zero bias, so the fused graph runs it as a conv without epilogue.
 */
export const CELLS_CONV = "policy.cells.w";

/**
 * Inference with batch norm folded into the convolutions and each block's bias, residual add and
 * ReLU in its conv's epilogue: two convolutions per residual block and no elementwise passes in
 * the tower. Same outputs as runPass in inference mode (up to rounding). A cells net needs
 * `moveCells` (the move table [B, W, 4]) and CELLS_CONV in `folded`; a pooled value head
 * (cfg.valuePool) runs its folded 1x1 conv, then meanPool, then the fully connected layers.
 */
export function runFusedInference<T extends Shaped>(
  b: FusedBackend<T>,
  cfg: NetConfig,
  params: Map<string, T>,
  folded: Map<string, FoldedConv<T>>,
  x: T,
  mask: T,
  moveCells: T | null = null,
): PassOutputs<T> {
  const P = (n: string): T => {
    const t = params.get(n);
    if (!t) throw new Error(`missing tensor ${n}`);
    return t;
  };
  const F = (n: string): FoldedConv<T> => {
    const t = folded.get(n);
    if (!t) throw new Error(`missing folded conv ${n}`);
    return t;
  };
  const chain = new Map(towerChain(cfg).map((l) => [l.conv, l]));
  const conv = (x: T, name: string, res: T | null) => {
    const f = F(name), c = chain.get(name);
    const next = c?.next ? { u: F(c.next).u ?? null, keepY: c.keepY } : null;
    return b.convFused(x, f.w, f.b, res, true, f.u ?? null, next);
  };
  b.mark?.("stem and tower");
  let h = conv(x, "stem.conv", null);
  for (let i = 0; i < cfg.blocks; i++) {
    const r1 = conv(h, `block${i}.conv1`, null);
    const out = conv(r1, `block${i}.conv2`, h);
    b.release(r1);
    b.release(h);
    h = out;
  }
  b.mark?.("heads");
  const pol = conv(h, "policy.conv", null);
  let logits: T;
  if (cfg.cells) {
    if (!moveCells) {
      throw new KibitzError("bad_batch", "a cells-head network needs the batch's move table");
    }
    const f = F(CELLS_CONV);
    const q = b.convFused(pol, f.w, f.b, null, false, f.u ?? null);
    b.release(pol);
    logits = b.cellLogits(q, moveCells, P("policy.cells.b"), cfg.moves);
    b.release(q);
  } else {
    logits = b.linear(pol, P("policy.fc.w"), P("policy.fc.b"));
    b.release(pol);
  }
  const { probs } = b.policyLoss(logits, mask, null);
  b.release(logits);
  const val = conv(h, "value.conv", null);
  b.release(h);
  // The pooled value head (cfg.valuePool) reads each value channel's mean over the board.
  const pooled = cfg.valuePool ? b.meanPool(val) : null;
  if (pooled) b.release(val);
  const f1 = b.linear(pooled ?? val, P("value.fc1.w"), P("value.fc1.b"));
  b.release(pooled ?? val);
  const f1r = b.relu(f1);
  b.release(f1);
  const z = b.linear(f1r, P("value.fc2.w"), P("value.fc2.b"));
  b.release(f1r);
  const { value } = b.valueLoss(z, null);
  b.release(z);
  return { probs, value, policyLoss: null, valueLoss: null };
}

import type { NnBackend, SgdHyper } from "./backend.ts";
import type { BnParams } from "./cpu/batchnorm.ts";
import type { NetConfig } from "./config.ts";
import type { ParamSpec } from "./params.ts";
import type { Shaped } from "./tensor.ts";

/** The model's tensors on one backend: parameters, and (for training) gradients and velocities. */
export interface NetTensors<T extends Shaped> {
  config: NetConfig;
  specs: ParamSpec[];
  params: Map<string, T>;
  grads: Map<string, T> | null;
  velocity: Map<string, T> | null;
}

/** Inputs of one pass: planes [B, C, H, W], legal mask [B, moves], optional targets. */
export interface PassInputs<T> {
  x: T;
  mask: T;
  policyTarget: T | null;
  valueTarget: T | null;
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

  // conv -> BN -> ReLU; saves (c, stats) on the tape in training.
  const cbr = (x: T, conv: string, bn: string) => {
    const c = b.conv2d(x, P(conv));
    const { y: z, stats } = b.batchNorm(c, bnp(bn), isTrain);
    const y = b.relu(z);
    free(z);
    if (!isTrain) free(c, stats);
    return { c, stats, y };
  };
  const cbrBack = (
    x: T,
    s: { c: T; stats: T; y: T },
    dy: T,
    conv: string,
    bn: string,
    needDx: boolean,
  ): T | null => {
    const dz = b.reluBackward(s.y, dy);
    const dc = b.batchNormBackward(
      s.c,
      dz,
      s.stats,
      P(`${bn}.gamma`),
      G(`${bn}.gamma`),
      G(`${bn}.beta`),
    );
    const dx = b.conv2dBackward(x, P(conv), dc, G(conv), needDx);
    free(dz, dc, s.c, s.stats);
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
    const { y: z2, stats: s2 } = b.batchNorm(c2, bnp(`block${i}.bn2`), isTrain);
    const a = b.add(z2, x0);
    const out = b.relu(a);
    free(z2, a);
    if (isTrain) tape.push({ x0, r1, c2, s2, out });
    else free(r1.y, c2, s2, x0);
    h = out;
  }

  // Heads.
  const pol = cbr(h, "policy.conv", "policy.bn");
  const logits = b.linear(pol.y, P("policy.fc.w"), P("policy.fc.b"));
  const pl = b.policyLoss(logits, inp.mask, inp.policyTarget);
  free(logits);
  const val = cbr(h, "value.conv", "value.bn");
  const f1 = b.linear(val.y, P("value.fc1.w"), P("value.fc1.b"));
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
    free(pol.y, val.y, f1r, h);
    return outputs;
  }
  if (!pl.dlogits || !vl.dz) throw new Error("training needs policy and value targets");

  // Backward: heads, then the tower in reverse.
  b.mark?.("backward: heads");
  const dpy = b.linearBackward(
    pol.y,
    P("policy.fc.w"),
    pl.dlogits,
    G("policy.fc.w"),
    G("policy.fc.b"),
    true,
  )!;
  free(pl.dlogits);
  const dhp = cbrBack(h, pol, dpy, "policy.conv", "policy.bn", true)!;
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
  const dvy = b.linearBackward(
    val.y,
    P("value.fc1.w"),
    df1,
    G("value.fc1.w"),
    G("value.fc1.b"),
    true,
  )!;
  free(df1);
  const dhv = cbrBack(h, val, dvy, "value.conv", "value.bn", true)!;
  free(dvy, val.y);
  let dh = b.add(dhp, dhv);
  free(dhp, dhv);
  b.mark?.("backward: tower");
  for (let i = net.config.blocks - 1; i >= 0; i--) {
    const t = tape[i];
    const da = b.reluBackward(t.out, dh);
    free(dh, t.out);
    const dc2 = b.batchNormBackward(
      t.c2,
      da,
      t.s2,
      P(`block${i}.bn2.gamma`),
      G(`block${i}.bn2.gamma`),
      G(`block${i}.bn2.beta`),
    );
    const dr1 = b.conv2dBackward(t.r1.y, P(`block${i}.conv2`), dc2, G(`block${i}.conv2`), true)!;
    free(dc2, t.c2, t.s2);
    const dx0 = cbrBack(t.x0, t.r1, dr1, `block${i}.conv1`, `block${i}.bn1`, true)!;
    free(dr1, t.r1.y);
    dh = b.add(dx0, da);
    free(dx0, da);
  }
  cbrBack(inp.x, stem, dh, "stem.conv", "stem.bn", false);
  free(dh, stem.y);

  // SGD on every trainable tensor.
  b.mark?.("optimizer (SGD)");
  for (const s of net.specs) {
    if (s.trainable) b.sgd(P(s.name), G(s.name), net.velocity!.get(s.name)!, train);
  }
  return outputs;
}

// Single-position inference for CPU search (the UHP engine's MCTS): batch norm folded into every
// convolution, the fast convolution with its bias/residual/ReLU epilogue, and only the policy
// logits of the moves asked for (a position has tens of legal moves out of 5,489, so the policy
// head's fully connected layer, 7.4M weights at the shipped size, costs a few hundred dot products
// instead of all of them).
import type { NetConfig } from "../config.ts";
import type { NetWeights } from "../params.ts";
import { type CpuTensor, cpuTensor } from "../tensor.ts";
import { KibitzError } from "../../errors.ts";
import { conv2dSimd } from "./conv_simd.ts";
import { foldBn } from "./fused.ts";

interface Folded {
  w: CpuTensor;
  b: Float32Array;
}

/** A network prepared for fast one-position evaluation (weights are shared, not copied). */
export class FastInference {
  readonly config: NetConfig;
  private readonly convs = new Map<string, Folded>();
  private readonly pw: Float32Array;
  private readonly pb: Float32Array;
  private readonly v1w: Float32Array;
  private readonly v1b: Float32Array;
  private readonly v2w: Float32Array;
  private readonly v2b: number;
  private readonly hidden: Float32Array;

  constructor(weights: NetWeights) {
    const c = weights.config;
    this.config = c;
    const T = (n: string): CpuTensor => {
      const t = weights.tensors.get(n);
      if (!t) throw new KibitzError("shape_mismatch", `weights lack tensor ${n}`);
      return t;
    };
    const fold = (conv: string, bn: string) => {
      const f = foldBn(T(conv), T(`${bn}.gamma`), T(`${bn}.beta`), T(`${bn}.mean`), T(`${bn}.var`));
      this.convs.set(conv, { w: f.w, b: f.b.data });
    };
    fold("stem.conv", "stem.bn");
    for (let i = 0; i < c.blocks; i++) {
      fold(`block${i}.conv1`, `block${i}.bn1`);
      fold(`block${i}.conv2`, `block${i}.bn2`);
    }
    fold("policy.conv", "policy.bn");
    fold("value.conv", "value.bn");
    this.pw = T("policy.fc.w").data;
    this.pb = T("policy.fc.b").data;
    this.v1w = T("value.fc1.w").data;
    this.v1b = T("value.fc1.b").data;
    this.v2w = T("value.fc2.w").data;
    this.v2b = T("value.fc2.b").data[0];
    this.hidden = new Float32Array(c.valueHidden);
  }

  private conv(x: CpuTensor, name: string, res: CpuTensor | null): CpuTensor {
    const f = this.convs.get(name)!;
    return conv2dSimd(x, f.w, f.b, res?.data ?? null, true);
  }

  /**
   * Evaluates one encoded position (`planes` from `offset`, planes x height x width values):
   * writes into `priors` the softmax over the policy logits of `moves` (policy indices) and
   * returns the value for the side to move, in [-1, 1].
   */
  evaluate(
    planes: Float32Array,
    offset: number,
    moves: ArrayLike<number>,
    priors: Float32Array,
  ): number {
    const c = this.config, hw = c.height * c.width;
    const x = cpuTensor(
      [1, c.planes, c.height, c.width],
      planes.subarray(offset, offset + c.planes * hw),
    );
    let h = this.conv(x, "stem.conv", null);
    for (let i = 0; i < c.blocks; i++) {
      const r1 = this.conv(h, `block${i}.conv1`, null);
      h = this.conv(r1, `block${i}.conv2`, h);
    }
    // Policy: logits of the asked moves only, then their softmax.
    const pol = this.conv(h, "policy.conv", null).data;
    const inp = pol.length, pw = this.pw;
    let mx = -Infinity;
    for (let j = 0; j < moves.length; j++) {
      const m = moves[j];
      if (!(m >= 0 && m < c.moves)) {
        throw new KibitzError("bad_batch", `policy index ${m} outside 0..${c.moves - 1}`);
      }
      const wo = m * inp;
      let s = this.pb[m];
      for (let i = 0; i < inp; i++) s += pw[wo + i] * pol[i];
      priors[j] = s;
      if (s > mx) mx = s;
    }
    let sum = 0;
    for (let j = 0; j < moves.length; j++) {
      priors[j] = Math.exp(priors[j] - mx);
      sum += priors[j];
    }
    for (let j = 0; j < moves.length; j++) priors[j] /= sum;
    // Value: conv -> fc1 -> ReLU -> fc2 -> tanh.
    const val = this.conv(h, "value.conv", null).data;
    const hid = this.hidden, w1 = this.v1w, n1 = val.length;
    for (let o = 0; o < hid.length; o++) {
      let s = this.v1b[o];
      const wo = o * n1;
      for (let i = 0; i < n1; i++) s += w1[wo + i] * val[i];
      hid[o] = s > 0 ? s : 0;
    }
    let z = this.v2b;
    for (let o = 0; o < hid.length; o++) z += this.v2w[o] * hid[o];
    return Math.tanh(z);
  }
}

// Single-position inference for CPU search (the UHP engine's MCTS): batch norm folded into every
// convolution, the fast convolution with its bias/residual/ReLU epilogue, and only the policy
// logits of the moves asked for (a position has tens of legal moves out of 5,489, so the policy
// head's fully connected layer, 7.4M weights at the shipped size, costs a few hundred dot products
// instead of all of them). The cells head computes each asked move's logit from its own cells
// only: the 1x1 score conv at the (at most two) cells the move names, plus its kind's bias.
import type { NetConfig } from "../config.ts";
import type { NetWeights } from "../params.ts";
import { type CpuTensor, cpuTensor } from "../tensor.ts";
import { KibitzError } from "../../errors.ts";
import { conv2dSimd, type ResidualBlockWeights, residualTowerSimd } from "./conv_simd.ts";
import { DenseRows } from "./dense_simd.ts";
import { foldBn } from "./fused.ts";

interface Folded {
  w: CpuTensor;
  b: Float32Array;
}

/** A network prepared for fast one-position evaluation (weights are shared, not copied). */
export class FastInference {
  readonly config: NetConfig;
  private readonly convs = new Map<string, Folded>();
  /** The residual blocks' folded convolutions, in order (see residualTowerSimd). */
  private readonly blocks: ResidualBlockWeights[] = [];
  private readonly pw: Float32Array | null = null;
  private readonly pb: Float32Array | null = null;
  /** The cells head's score conv [planes, hidden] and move-kind biases (null: the FC head). */
  private readonly cw: Float32Array | null = null;
  private readonly cb: Float32Array | null = null;
  private readonly v1w: Float32Array;
  private readonly v1b: Float32Array;
  private readonly v2w: Float32Array;
  private readonly v2b: number;
  private readonly hidden: Float32Array;
  /** dotPair's two sums. */
  private readonly pair = new Float64Array(2);
  /** The value head's fc1 in Wasm (null where it does not run; undefined until first used). */
  private dense: DenseRows | null | undefined = undefined;
  /** Its row sums. */
  private readonly sums: Float64Array;
  /** The value conv's output, kept between calls (read only within evaluateBatch). */
  private valueOut = new Float32Array(0);
  /** The cells head's scratch: one cell's tower outputs, channel by channel. */
  private column = new Float32Array(0);
  private taps: Float32Array | null = null;
  /** The cells head's per-cell policy features of the current position, and when each was made. */
  private feat: Float32Array | null = null;
  private stamp: Int32Array | null = null;
  private gen = 0;
  private ones: Float32Array | null = null;
  private onesUniform: boolean | null = null;
  /** stemKinds' lists of the scattered planes' non-zeros (see there). */
  private nzIdx: Int32Array | null = null;
  private nzStart: Int32Array | null = null;
  /** The residual tower's output, kept between calls (read only within evaluateBatch). */
  private towerOut: Float32Array | null = null;
  private stemBufs: {
    y: Float32Array;
    rowL: Float64Array;
    rowM: Float64Array;
    rowR: Float64Array;
    touched: Uint8Array;
    list: Int32Array;
    rowTouched: Uint8Array;
    constPlanes: Int32Array;
    rowKind: Int8Array;
    rows: Int32Array | null;
  } | null = null;
  /**
   * Runs the sparse stem the straightforward way (stemSparsePlain) instead of its shortcut: the
   * same bits, slower; for the oracle tests and the throughput bench's "before" row.
   */
  plainStem = false;
  /**
   * Computes the whole tower instead of only the cells the stem's output can make differ
   * (residualTowerSimd's `rows`): the same bits, for tests and the bench's "before" row.
   */
  denseTower = false;
  /** Per image and row of the last stem output, its cells off the row's common value (or null). */
  private stemRows: Int32Array | null = null;

  /**
   * `sparseStem` false runs the stem as the dense Wasm SIMD conv always (the baseline of the
   * throughput bench); the results are the same up to f32 summation order.
   */
  constructor(weights: NetWeights, readonly sparseStem = true) {
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
      const c1 = this.convs.get(`block${i}.conv1`)!, c2 = this.convs.get(`block${i}.conv2`)!;
      this.blocks.push({ w1: c1.w, b1: c1.b, w2: c2.w, b2: c2.b });
    }
    fold("policy.conv", "policy.bn");
    fold("value.conv", "value.bn");
    if (c.cells) {
      this.cw = T("policy.cells.w").data;
      this.cb = T("policy.cells.b").data;
    } else {
      this.pw = T("policy.fc.w").data;
      this.pb = T("policy.fc.b").data;
    }
    this.v1w = T("value.fc1.w").data;
    this.v1b = T("value.fc1.b").data;
    this.v2w = T("value.fc2.w").data;
    this.v2b = T("value.fc2.b").data[0];
    this.hidden = new Float32Array(c.valueHidden);
    this.sums = new Float64Array(c.valueHidden);
  }

  private conv(x: CpuTensor, name: string, res: CpuTensor | null): CpuTensor {
    const f = this.convs.get(name)!;
    return conv2dSimd(x, f.w, f.b, res?.data ?? null, true);
  }

  /**
   * The stem (folded conv + ReLU) of `n` encoded positions. Hive inputs are mostly zeros, whole-plane
   * constants (queen neighbours, turn) and row constants (pieces in hand), so when the input is
   * sparse enough the stem is computed by linearity: bias, plus each constant plane's value times
   * the conv of a plane of ones (precomputed, edges included), plus a scatter of each non-zero
   * value of the other planes through the 3 x 3 taps. Same values as the dense conv up to f32
   * summation order, at a few percent of its work; dense inputs take the Wasm SIMD conv.
   */
  private stem(planes: Float32Array, offset: number, n: number): CpuTensor {
    const c = this.config, hw = c.height * c.width, per = c.planes * hw;
    const f = this.convs.get("stem.conv")!;
    const k = f.w.shape[2];
    const x = planes.subarray(offset, offset + n * per);
    this.stemRows = null;
    if (k !== 3 || !this.sparseStem) {
      return this.conv(cpuTensor([n, c.planes, c.height, c.width], x), "stem.conv", null);
    }
    const kind = this.stemKinds(x, n);
    if (kind === null) {
      return this.conv(cpuTensor([n, c.planes, c.height, c.width], x), "stem.conv", null);
    }
    return this.stemOnesUniform() && !this.plainStem
      ? this.stemSparseTouched(x, n, kind)
      : this.stemSparsePlain(x, n, kind);
  }

  /**
   * Per plane of the `n` positions in `x`: 0 all zero, 1 constant, 2 scattered; or null when the
   * sparse stem's work (multiply-adds) would exceed a third of the dense conv's.
   */
  private stemKinds(x: Float32Array, n: number): Int8Array | null {
    const c = this.config, hw = c.height * c.width, per = c.planes * hw;
    const co = this.convs.get("stem.conv")!.w.shape[0];
    let work = 0;
    const kind = new Int8Array(n * c.planes);
    // Each scattered plane's non-zeros (indices into x, ascending): nz[start[i] .. start[i + 1]).
    if (!this.nzIdx || this.nzIdx.length < x.length) this.nzIdx = new Int32Array(x.length);
    if (!this.nzStart || this.nzStart.length < n * c.planes + 1) {
      this.nzStart = new Int32Array(n * c.planes + 1);
    }
    const nzIdx = this.nzIdx, nzStart = this.nzStart;
    let at = 0;
    // Pairs of values read as one f64: 0 only when both are zeros (±0), so zero pairs are
    // skipped in one step (where the planes start at a multiple of 8 bytes and hw is even).
    const x64 = x.byteOffset % 8 === 0 && hw % 2 === 0
      ? new Float64Array(x.buffer, x.byteOffset, x.length >> 1)
      : null;
    for (let i = 0; i < n * c.planes; i++) {
      const o = i * hw, v0 = x[o];
      nzStart[i] = at;
      if (v0 === 0) {
        // Zero until the first non-zero; from there, a scattered plane's non-zeros.
        if (x64) {
          for (let j = o >> 1, e = (o + hw) >> 1; j < e; j++) {
            if (x64[j] === 0) continue;
            if (x[2 * j] !== 0) nzIdx[at++] = 2 * j;
            if (x[2 * j + 1] !== 0) nzIdx[at++] = 2 * j + 1;
          }
        } else {
          for (let j = o; j < o + hw; j++) if (x[j] !== 0) nzIdx[at++] = j;
        }
        const nz = at - nzStart[i];
        kind[i] = nz === 0 ? 0 : 2;
        work += nz * 9 * co;
        continue;
      }
      // The prefix equal to the first value, then (a scattered plane) the other non-zeros.
      let j = 1;
      while (j < hw && x[o + j] === v0) j++;
      if (j === hw) {
        kind[i] = 1;
        work += hw * co;
        continue;
      }
      for (let q = 0; q < j; q++) nzIdx[at++] = o + q;
      for (; j < hw; j++) if (x[o + j] !== 0) nzIdx[at++] = o + j;
      kind[i] = 2;
      work += (at - nzStart[i]) * 9 * co;
    }
    nzStart[n * c.planes] = at;
    return work * 3 > n * per * 9 * co ? null : kind;
  }

  /**
   * The sparse stem, straightforwardly: every output value takes every constant plane's term
   * (see stem). stemSparseTouched gives the same bits faster; this stays as its oracle and its
   * fallback.
   */
  private stemSparsePlain(x: Float32Array, n: number, kind: Int8Array): CpuTensor {
    const c = this.config, hw = c.height * c.width;
    const f = this.convs.get("stem.conv")!;
    const co = f.w.shape[0];
    const ones = this.stemOnes();
    const wt = this.stemTaps();
    const y = cpuTensor([n, co, c.height, c.width]), yd = y.data;
    const H = c.height, W = c.width;
    // Per output channel and row, the constant rows' contributions to its first, middle and last
    // cells, summed over all such rows before one pass adds them.
    const rowL = new Float64Array(co * H), rowM = new Float64Array(co * H);
    const rowR = new Float64Array(co * H);
    for (let b = 0; b < n; b++) {
      const yo = b * co * hw;
      for (let o = 0; o < co; o++) yd.fill(f.b[o], yo + o * hw, yo + (o + 1) * hw);
      let constRows = false;
      for (let p = 0; p < c.planes; p++) {
        const kd = kind[b * c.planes + p], xo = (b * c.planes + p) * hw;
        if (kd === 0) continue;
        if (kd === 1) {
          const v = x[xo], eo = p * co * hw;
          for (let j = 0; j < co * hw; j++) yd[yo + j] += v * ones[eo + j];
          continue;
        }
        for (let r = 0; r < H; r++) {
          const ro = xo + r * W, rv = x[ro];
          let rowConst = rv !== 0;
          for (let q = 1; q < W && rowConst; q++) rowConst = x[ro + q] === rv;
          if (rowConst) {
            // A row of one value: per output row, the taps of each kernel row summed (two taps at
            // the left and right edges).
            if (!constRows) {
              constRows = true;
              rowL.fill(0);
              rowM.fill(0);
              rowR.fill(0);
            }
            addConstRow(wt, p, r, rv, co, H, rowL, rowM, rowR);
            continue;
          }
          for (let q = 0; q < W; q++) {
            const v = x[ro + q];
            if (v === 0) continue;
            // x[r, q] feeds y[r + 1 - ky, q + 1 - kx] through tap (ky, kx).
            for (let ky = 0; ky < 3; ky++) {
              const yr = r + 1 - ky;
              if (yr < 0 || yr >= H) continue;
              for (let kx = 0; kx < 3; kx++) {
                const yc = q + 1 - kx;
                if (yc < 0 || yc >= W) continue;
                const to = yo + yr * W + yc, wo = ((p * 3 + ky) * 3 + kx) * co;
                for (let o = 0; o < co; o++) yd[to + o * hw] += v * wt[wo + o];
              }
            }
          }
        }
      }
      if (constRows) {
        for (let t = 0; t < co * H; t++) {
          const to = yo + t * W, mid = rowM[t];
          yd[to] += rowL[t];
          for (let q = 1; q < W - 1; q++) yd[to + q] += mid;
          yd[to + W - 1] += rowR[t];
        }
      }
      for (let j = yo; j < yo + co * hw; j++) if (yd[j] < 0) yd[j] = 0;
    }
    return y;
  }

  /**
   * Whether every plane's `ones` row is one value across its middle columns (1 .. width - 2), as
   * the conv of a constant plane is: then stemSparseTouched may compute a row's middle once.
   */
  private stemOnesUniform(): boolean {
    if (this.onesUniform !== null) return this.onesUniform;
    const ones = this.stemOnes(), W = this.config.width;
    let uniform = W >= 3;
    for (let r = 0; uniform && r < ones.length; r += W) {
      for (let q = 2; q < W - 1; q++) if (ones[r + q] !== ones[r + 1]) uniform = false;
    }
    return (this.onesUniform = uniform);
  }

  /**
   * The sparse stem with the same float operations, in the same order, as stemSparsePlain, done
   * once per distinct output instead of once per cell: a cell that no scattered value reaches
   * (most of the board) takes bias, then each constant plane's term, then its row-constant terms,
   * and those terms are the same along a row's middle columns (stemOnesUniform), so each output
   * row's left, middle and right values are computed once and written to its untouched cells.
   * The cells that scattered values reach follow stemSparsePlain's order cell by cell.
   */
  private stemSparseTouched(x: Float32Array, n: number, kind: Int8Array): CpuTensor {
    const c = this.config, hw = c.height * c.width, H = c.height, W = c.width;
    const f = this.convs.get("stem.conv")!;
    const co = f.w.shape[0];
    const ones = this.stemOnes();
    const wt = this.stemTaps();
    const s = this.stemScratch(n * co * hw);
    const y: CpuTensor = { shape: [n, co, H, W], data: s.y.subarray(0, n * co * hw) };
    const yd = y.data, rowL = s.rowL, rowM = s.rowM, rowR = s.rowR;
    const touched = s.touched, list = s.list, rowTouched = s.rowTouched, cp = s.constPlanes;
    // Per scattered plane and row, 1 for a row of one non-zero value (marked by the first pass).
    const rowKind = s.rowKind;
    // The scattered planes' non-zeros, as stemKinds listed them for these planes.
    const nzIdx = this.nzIdx!, nzStart = this.nzStart!;
    const fr = Math.fround;
    // Where each image's output can differ from its row's untouched value (see stemRows).
    let rowsOut: Int32Array | null = null;
    if (W <= 30) {
      if (!s.rows || s.rows.length < n * H) s.rows = new Int32Array(n * H);
      rowsOut = this.stemRows = s.rows;
    }
    for (let b = 0; b < n; b++) {
      const yo = b * co * hw;
      // The cells reached by some scattered value: a non-zero outside a row of one value.
      touched.fill(0);
      rowTouched.fill(0);
      let count = 0;
      for (let p = 0; p < c.planes; p++) {
        const i = b * c.planes + p;
        if (kind[i] !== 2) continue;
        const xo = i * hw, end = nzStart[i + 1];
        rowKind.fill(0, p * H, (p + 1) * H);
        // The plane's non-zeros row by row: a full row of one value, or cells to mark.
        for (let e = nzStart[i]; e < end;) {
          const r = ((nzIdx[e] - xo) / W) | 0, rowEnd = xo + (r + 1) * W;
          let e2 = e + 1;
          while (e2 < end && nzIdx[e2] < rowEnd) e2++;
          let rowConst = e2 - e === W;
          for (let k = e + 1; k < e2 && rowConst; k++) rowConst = x[nzIdx[k]] === x[nzIdx[e]];
          if (rowConst) {
            rowKind[p * H + r] = 1;
            e = e2;
            continue;
          }
          for (; e < e2; e++) {
            const q = nzIdx[e] - xo - r * W;
            for (let yr = r - 1; yr <= r + 1; yr++) {
              if (yr < 0 || yr >= H) continue;
              for (let yc = q - 1; yc <= q + 1; yc++) {
                if (yc < 0 || yc >= W || touched[yr * W + yc]) continue;
                touched[yr * W + yc] = 1;
                rowTouched[yr] = 1;
                list[count++] = yr * W + yc;
              }
            }
          }
        }
      }
      if (rowsOut) {
        for (let r = 0; r < H; r++) {
          let m = 0;
          if (rowTouched[r]) { for (let q = 0; q < W; q++) m |= touched[r * W + q] << q; }
          rowsOut[b * H + r] = m;
        }
      }
      for (let o = 0; o < co; o++) {
        const bo = yo + o * hw, bias = f.b[o];
        for (let i = 0; i < count; i++) yd[bo + list[i]] = bias;
      }
      let constRows = false;
      for (let p = 0; p < c.planes; p++) {
        const kd = kind[b * c.planes + p], xo = (b * c.planes + p) * hw;
        if (kd === 0) continue;
        if (kd === 1) {
          const v = x[xo], eo = p * co * hw;
          for (let o = 0; o < co; o++) {
            const to = yo + o * hw, so = eo + o * hw;
            for (let i = 0; i < count; i++) yd[to + list[i]] += v * ones[so + list[i]];
          }
          continue;
        }
        const end = nzStart[b * c.planes + p + 1];
        for (let e = nzStart[b * c.planes + p]; e < end;) {
          const r = ((nzIdx[e] - xo) / W) | 0, ro = xo + r * W, rv = x[ro];
          if (rowKind[p * H + r] === 1) {
            e += W;
            if (!constRows) {
              constRows = true;
              rowL.fill(0);
              rowM.fill(0);
              rowR.fill(0);
            }
            addConstRow(wt, p, r, rv, co, H, rowL, rowM, rowR);
            continue;
          }
          // The row's non-zeros, in column order.
          for (; e < end && nzIdx[e] < ro + W; e++) {
            const q = nzIdx[e] - ro, v = x[nzIdx[e]];
            for (let ky = 0; ky < 3; ky++) {
              const yr = r + 1 - ky;
              if (yr < 0 || yr >= H) continue;
              for (let kx = 0; kx < 3; kx++) {
                const yc = q + 1 - kx;
                if (yc < 0 || yc >= W) continue;
                const to = yo + yr * W + yc, wo = ((p * 3 + ky) * 3 + kx) * co;
                for (let o = 0; o < co; o++) yd[to + o * hw] += v * wt[wo + o];
              }
            }
          }
        }
      }
      // The touched cells: their row-constant terms, then ReLU.
      for (let o = 0; o < co; o++) {
        const bo = yo + o * hw;
        if (!constRows) {
          for (let i = 0; i < count; i++) if (yd[bo + list[i]] < 0) yd[bo + list[i]] = 0;
          continue;
        }
        for (let i = 0; i < count; i++) {
          const cell = list[i], j = bo + cell;
          const r = (cell / W) | 0, q = cell - r * W, t = o * H + r;
          yd[j] += q === 0 ? rowL[t] : q === W - 1 ? rowR[t] : rowM[t];
          if (yd[j] < 0) yd[j] = 0;
        }
      }
      // The untouched cells: per output row, its left, middle and right values.
      let constCount = 0;
      for (let p = 0; p < c.planes; p++) if (kind[b * c.planes + p] === 1) cp[constCount++] = p;
      for (let o = 0; o < co; o++) {
        const bias = f.b[o];
        for (let r = 0; r < H; r++) {
          let vl = bias, vm = bias, vr = bias;
          for (let i = 0; i < constCount; i++) {
            const p = cp[i], v = x[(b * c.planes + p) * hw], so = (p * co + o) * hw + r * W;
            vl = fr(vl + v * ones[so]);
            vm = fr(vm + v * ones[so + 1]);
            vr = fr(vr + v * ones[so + W - 1]);
          }
          if (constRows) {
            const t = o * H + r;
            vl = fr(vl + rowL[t]);
            vm = fr(vm + rowM[t]);
            vr = fr(vr + rowR[t]);
          }
          if (vl < 0) vl = 0;
          if (vm < 0) vm = 0;
          if (vr < 0) vr = 0;
          const to = yo + o * hw + r * W;
          if (!rowTouched[r]) {
            yd[to] = vl;
            for (let q = 1; q < W - 1; q++) yd[to + q] = vm;
            yd[to + W - 1] = vr;
            continue;
          }
          const rc = r * W;
          if (!touched[rc]) yd[to] = vl;
          for (let q = 1; q < W - 1; q++) if (!touched[rc + q]) yd[to + q] = vm;
          if (!touched[rc + W - 1]) yd[to + W - 1] = vr;
        }
      }
    }
    return y;
  }

  /** stemSparseTouched's buffers, kept between calls (its output is read before the next call). */
  private stemScratch(size: number) {
    const c = this.config, co = this.convs.get("stem.conv")!.w.shape[0], hw = c.height * c.width;
    let s = this.stemBufs;
    if (!s || s.y.length < size) {
      s = this.stemBufs = {
        y: new Float32Array(size),
        rowL: new Float64Array(co * c.height),
        rowM: new Float64Array(co * c.height),
        rowR: new Float64Array(co * c.height),
        touched: new Uint8Array(hw),
        list: new Int32Array(hw),
        rowTouched: new Uint8Array(c.height),
        constPlanes: new Int32Array(c.planes),
        rowKind: new Int8Array(c.planes * c.height),
        rows: null,
      };
    }
    return s;
  }

  /** Scratch for the cells head's per-cell features ([cell][hidden]). */
  private cellFeatures(size: number): Float32Array {
    if (!this.feat || this.feat.length < size) this.feat = new Float32Array(size);
    return this.feat;
  }

  /** Per cell, the position counter (gen) its features were computed for. */
  private cellStamp(hw: number): Int32Array {
    if (!this.stamp || this.stamp.length < hw) this.stamp = new Int32Array(hw).fill(-1);
    return this.stamp;
  }

  /** The folded stem weights as [plane][ky][kx][out channel] (the scatter's inner loop). */
  private stemTaps(): Float32Array {
    if (this.taps) return this.taps;
    const w = this.convs.get("stem.conv")!.w, [co, ci] = w.shape;
    const t = new Float32Array(co * ci * 9);
    for (let o = 0; o < co; o++) {
      for (let p = 0; p < ci; p++) {
        for (let j = 0; j < 9; j++) t[(p * 9 + j) * co + o] = w.data[(o * ci + p) * 9 + j];
      }
    }
    return (this.taps = t);
  }

  /** Per input plane, the stem conv (no bias) of that plane full of ones: [plane][out][h][w]. */
  private stemOnes(): Float32Array {
    if (this.ones) return this.ones;
    const c = this.config, hw = c.height * c.width;
    const w = this.convs.get("stem.conv")!.w, co = w.shape[0];
    const out = new Float32Array(c.planes * co * hw);
    const x = cpuTensor([1, c.planes, c.height, c.width]);
    for (let p = 0; p < c.planes; p++) {
      x.data.fill(0);
      x.data.fill(1, p * hw, (p + 1) * hw);
      out.set(conv2dSimd(x, w, null, null, false).data, p * co * hw);
    }
    return (this.ones = out);
  }

  /**
   * The value head's fully connected input for `n` positions: the value conv's output as it is, or
   * for the pooled head (config.valuePool) each channel's mean over the board (summed as
   * cpu/pool.ts does, so the same values).
   */
  private valueInput(val: Float32Array, n: number, hw: number): Float32Array {
    const vp = this.config.valuePool;
    if (!vp) return val;
    const out = new Float32Array(n * vp);
    for (let i = 0; i < n * vp; i++) {
      let s = 0;
      for (let j = 0; j < hw; j++) s += val[i * hw + j];
      out[i] = s / hw;
    }
    return out;
  }

  /**
   * Evaluates one encoded position (`planes` from `offset`, planes x height x width values):
   * writes into `priors` the softmax over the policy logits of `moves` (policy indices) and
   * returns the value for the side to move, in [-1, 1]. A cells net needs `cells`: 3 integers
   * per move, aligned with `moves`, (a, b, slot) as in NetBatch.moveCells; an FC net ignores it.
   */
  evaluate(
    planes: Float32Array,
    offset: number,
    moves: ArrayLike<number>,
    priors: Float32Array,
    cells?: ArrayLike<number>,
  ): number {
    const v = new Float32Array(1);
    this.evaluateBatch(planes, offset, 1, [moves], [priors], v, cells ? [cells] : undefined);
    return v[0];
  }

  /**
   * Evaluates `n` encoded positions stored one after another from `offset` as one batch (the
   * convolutions run over all of them at once): position b's priors over `moves[b]` go to
   * `priors[b]`, its value to `values[b]`. The same results as `n` calls of `evaluate`. A cells
   * net needs `cells[b]` (3 integers per move of `moves[b]`: a, b, slot); an FC net ignores it.
   */
  evaluateBatch(
    planes: Float32Array,
    offset: number,
    n: number,
    moves: ArrayLike<number>[],
    priors: Float32Array[],
    values: Float32Array,
    cells?: ArrayLike<number>[],
  ): void {
    const c = this.config;
    if (c.cells) {
      for (let b = 0; b < n; b++) {
        const cb = cells?.[b];
        if (!cb) {
          throw new KibitzError(
            "bad_batch",
            `a cells-head network needs each position's move cells (missing for position ${b})`,
          );
        }
        if (cb.length !== 3 * moves[b].length) {
          throw new KibitzError(
            "bad_batch",
            `position ${b}: ${cb.length} move cell values for ${moves[b].length} moves ` +
              `(3 a move: a, b, slot)`,
          );
        }
      }
    }
    const towerSize = n * c.filters * c.height * c.width;
    if (!this.towerOut || this.towerOut.length < towerSize) {
      this.towerOut = new Float32Array(towerSize);
    }
    const stemOut = this.stem(planes, offset, n);
    const rows = this.denseTower ? undefined : this.stemRows?.subarray(0, n * c.height);
    const h = residualTowerSimd(stemOut, this.blocks, this.towerOut, rows);
    const cw = this.cw, cbias = this.cb;
    // The FC head reads the whole policy conv; the cells head only the cells its moves name.
    const polAll = cw ? null : this.conv(h, "policy.conv", null).data;
    const hw = c.height * c.width, pw = this.pw;
    const vc = this.convs.get("value.conv")!, valueSize = n * vc.w.shape[0] * hw;
    if (this.valueOut.length < valueSize) this.valueOut = new Float32Array(valueSize);
    const val = conv2dSimd(h, vc.w, vc.b, null, true, this.valueOut).data;
    const valAll = this.valueInput(val, n, hw);
    const vin = valAll.length / n;
    if (this.dense === undefined) {
      this.dense = DenseRows.create(this.v1w, this.hidden.length, vin);
    }
    const dense = this.dense?.n === vin ? this.dense : null;
    const inp = polAll ? polAll.length / n : 0;
    const cellCount = c.cells ? c.cells.planes * hw : 0;
    const hidden = c.cells?.hidden ?? 0, filters = c.filters;
    const pc = this.convs.get("policy.conv")!, fw = pc.w.data, fb = pc.b, hd = h.data;
    const feat = cw ? this.cellFeatures(hw * hidden) : null;
    const stamp = cw ? this.cellStamp(hw) : null;
    let ho = 0;
    // The cells head's score at flat index a (plane * H * W + cell) of the position whose tower
    // output starts at ho: the folded policy conv + ReLU at that cell (computed once a position,
    // on first use), then the 1x1 score conv of plane a / (H * W).
    if (this.column.length < filters) this.column = new Float32Array(filters);
    const col = this.column;
    const score = (a: number): number => {
      const p = Math.floor(a / hw), cell = a - p * hw, fo = cell * hidden;
      if (stamp![cell] !== this.gen) {
        stamp![cell] = this.gen;
        // The cell's tower outputs, gathered once (they lie a plane apart), then the same sums.
        for (let ch = 0; ch < filters; ch++) col[ch] = hd[ho + ch * hw + cell];
        for (let k = 0; k < hidden; k++) {
          let v = fb[k];
          const wo = k * filters;
          for (let ch = 0; ch < filters; ch++) v += fw[wo + ch] * col[ch];
          feat![fo + k] = v > 0 ? v : 0;
        }
      }
      const wo = p * hidden;
      let s = 0;
      for (let k = 0; k < hidden; k++) s += cw![wo + k] * feat![fo + k];
      return s;
    };
    for (let b = 0; b < n; b++) {
      // Policy: logits of the asked moves only, then their softmax.
      const mv = moves[b], pr = priors[b], po = b * inp, cl = cells?.[b];
      ho = b * filters * hw;
      if (++this.gen > 0x3fffffff) {
        this.gen = 1;
        stamp?.fill(-1);
      }
      let mx = -Infinity;
      for (let j = 0; j < mv.length; j++) {
        const m = mv[j];
        if (!(m >= 0 && m < c.moves)) {
          throw new KibitzError("bad_batch", `policy index ${m} outside 0..${c.moves - 1}`);
        }
        let s: number;
        if (cw) {
          const a = cl![3 * j], a2 = cl![3 * j + 1], slot = cl![3 * j + 2];
          if (!cellOk(a, cellCount) || !cellOk(a2, cellCount) || !cellOk(slot, cbias!.length)) {
            throw new KibitzError(
              "bad_batch",
              `move ${m}'s cells (${a}, ${a2}, ${slot}) are out of range ` +
                `(cells ${cellCount}, biases ${cbias!.length}; -1 for none)`,
            );
          }
          s = (a >= 0 ? score(a) : 0) + (a2 >= 0 ? score(a2) : 0) +
            (slot >= 0 ? cbias![slot] : 0);
        } else {
          const wo = m * inp;
          s = this.pb![m];
          for (let i = 0; i < inp; i++) s += pw![wo + i] * polAll![po + i];
        }
        pr[j] = s;
        if (s > mx) mx = s;
      }
      let sum = 0;
      for (let j = 0; j < mv.length; j++) {
        pr[j] = Math.exp(pr[j] - mx);
        sum += pr[j];
      }
      for (let j = 0; j < mv.length; j++) pr[j] /= sum;
      // Value: conv (-> channel means for the pooled head) -> fc1 -> ReLU -> fc2 -> tanh.
      const hid = this.hidden, w1 = this.v1w, vo = b * vin, pair = this.pair;
      let o = 0;
      if (dense) {
        dense.run(valAll, vo, this.sums);
        for (; o < hid.length; o++) {
          const s = this.v1b[o] + this.sums[o];
          hid[o] = s > 0 ? s : 0;
        }
      }
      for (; o + 2 <= hid.length; o += 2) {
        dotPair(w1, o * vin, (o + 1) * vin, valAll, vo, vin, pair);
        const s = this.v1b[o] + pair[0], s1 = this.v1b[o + 1] + pair[1];
        hid[o] = s > 0 ? s : 0;
        hid[o + 1] = s1 > 0 ? s1 : 0;
      }
      for (; o < hid.length; o++) {
        const s = this.v1b[o] + dot(w1, o * vin, valAll, vo, vin);
        hid[o] = s > 0 ? s : 0;
      }
      let z = this.v2b;
      for (let o = 0; o < hid.length; o++) z += this.v2w[o] * hid[o];
      values[b] = Math.tanh(z);
    }
  }
}

// A move-cell table entry in range: an integer from -1 (none) to below `hi`.
function cellOk(v: number, hi: number): boolean {
  return Number.isInteger(v) && v >= -1 && v < hi;
}

/**
 * The dot product of a[ao..ao + n) and b[bo..bo + n), in four partial sums: one chain of dependent
 * adds over the unpooled value head's 676 inputs is latency-bound, and a small function of its
 * own is compiled tighter than the same loop inside evaluateBatch. Exported for dotPair's test.
 */
export function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, n: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[ao + i] * b[bo + i];
    s1 += a[ao + i + 1] * b[bo + i + 1];
    s2 += a[ao + i + 2] * b[bo + i + 2];
    s3 += a[ao + i + 3] * b[bo + i + 3];
  }
  for (; i < n; i++) s0 += a[ao + i] * b[bo + i];
  return (s0 + s1) + (s2 + s3);
}

/**
 * dot(a, ao1, b, bo, n) and dot(a, ao2, b, bo, n) into out[0] and out[1], each summed exactly as
 * dot sums it (the same bits), in one pass that loads b once for both (the value head's rows
 * two at a time).
 */
export function dotPair(
  a: Float32Array,
  ao1: number,
  ao2: number,
  b: Float32Array,
  bo: number,
  n: number,
  out: Float64Array,
): void {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    const b0 = b[bo + i], b1 = b[bo + i + 1], b2 = b[bo + i + 2], b3 = b[bo + i + 3];
    s0 += a[ao1 + i] * b0;
    s1 += a[ao1 + i + 1] * b1;
    s2 += a[ao1 + i + 2] * b2;
    s3 += a[ao1 + i + 3] * b3;
    t0 += a[ao2 + i] * b0;
    t1 += a[ao2 + i + 1] * b1;
    t2 += a[ao2 + i + 2] * b2;
    t3 += a[ao2 + i + 3] * b3;
  }
  for (; i < n; i++) {
    s0 += a[ao1 + i] * b[bo + i];
    t0 += a[ao2 + i] * b[bo + i];
  }
  out[0] = (s0 + s1) + (s2 + s3);
  out[1] = (t0 + t1) + (t2 + t3);
}

/**
 * Adds row r of plane p, all of value rv, to the per-output-row sums of the stem's left, middle and
 * right cells (the taps of each kernel row summed; two taps at the left and right edges).
 */
function addConstRow(
  wt: Float32Array,
  p: number,
  r: number,
  rv: number,
  co: number,
  H: number,
  rowL: Float64Array,
  rowM: Float64Array,
  rowR: Float64Array,
): void {
  for (let ky = 0; ky < 3; ky++) {
    const yr = r + 1 - ky;
    if (yr < 0 || yr >= H) continue;
    const so = ((p * 3 + ky) * 3) * co;
    for (let o = 0; o < co; o++) {
      const a = wt[so + o], m = wt[so + co + o], z = wt[so + 2 * co + o];
      const t = o * H + yr;
      rowL[t] += rv * (m + z);
      rowM[t] += rv * (a + m + z);
      rowR[t] += rv * (a + m);
    }
  }
}

import { KibitzError } from "../../errors.ts";
import { type CpuTensor, cpuTensor, numel, shapeString } from "../tensor.ts";

function rows(x: CpuTensor, inputs: number): number {
  const b = x.shape[0];
  if (numel(x.shape) !== b * inputs) {
    throw new KibitzError(
      "shape_mismatch",
      `fully connected input ${shapeString(x.shape)} does not flatten to [${b}, ${inputs}]`,
    );
  }
  return b;
}

/** Reference flatten + fully connected layer: y[b, o] = sum_i x[b, i] * w[o, i] + bias[o]. */
export function linear(x: CpuTensor, w: CpuTensor, bias: CpuTensor): CpuTensor {
  const [out, inp] = w.shape;
  const b = rows(x, inp);
  const y = cpuTensor([b, out]);
  for (let r = 0; r < b; r++) {
    const xo = r * inp;
    for (let o = 0; o < out; o++) {
      const wo = o * inp;
      let s = bias.data[o];
      for (let i = 0; i < inp; i++) s += x.data[xo + i] * w.data[wo + i];
      y.data[r * out + o] = s;
    }
  }
  return y;
}

/** Reference fully connected backward: dx (shaped like x), dw = dy^T x, dbias = column sums of dy. */
export function linearBackward(
  x: CpuTensor,
  w: CpuTensor,
  dy: CpuTensor,
): { dx: CpuTensor; dw: CpuTensor; db: CpuTensor } {
  const [out, inp] = w.shape;
  const b = rows(x, inp);
  const dx = cpuTensor(x.shape);
  const dw = cpuTensor(w.shape);
  const db = cpuTensor([out]);
  const acc = new Float64Array(inp);
  for (let r = 0; r < b; r++) {
    acc.fill(0);
    for (let o = 0; o < out; o++) {
      const g = dy.data[r * out + o];
      if (g === 0) continue;
      const wo = o * inp;
      for (let i = 0; i < inp; i++) acc[i] += g * w.data[wo + i];
    }
    dx.data.set(acc, r * inp);
  }
  for (let o = 0; o < out; o++) {
    acc.fill(0);
    let sb = 0;
    for (let r = 0; r < b; r++) {
      const g = dy.data[r * out + o];
      sb += g;
      if (g === 0) continue;
      const xo = r * inp;
      for (let i = 0; i < inp; i++) acc[i] += g * x.data[xo + i];
    }
    dw.data.set(acc, o * inp);
    db.data[o] = sb;
  }
  return { dx, dw, db };
}

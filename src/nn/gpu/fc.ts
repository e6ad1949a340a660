// Which fully connected products the K-major forward GEMM (shaders/nn/fc.wgsl, kernel fcNt) can
// run: the inference forward pass C = x W^T + bias, x [M, K] and W [N, K] both row-major (the
// strides matmul gets for it), K a multiple of 4 (vec4 loads along K), and more than a few rows
// and K steps (thinner products take the untiled kernels). At batch 256 the policy layer of the
// 19 x 256 net is 256 x 1352 -> 5489 (3.8 GFLOP): about 0.5 of the plan's 80 GPU ms on the H200
// in the tiled matmul (session 31's profile, 7.6 TFLOP/s).

/** Rows or K steps at or below which a product runs untiled (GpuRecorder's matmul). */
export const FC_THIN = 8;

/** The key of a fully connected product of M rows, N outputs and K inputs. */
export function fcShapeKey(m: number, n: number, k: number): string {
  return `fc:${m}x${k}->${n}`;
}

/** Whether fcNt can run the product [m, n, k] with matmul's `strides` (a_sm, a_sk, b_sk, b_sn). */
export function fcNtFits(
  m: number,
  n: number,
  k: number,
  strides: readonly number[],
): boolean {
  const [aSm, aSk, bSk, bSn] = strides;
  return m > FC_THIN && n > 0 && k > FC_THIN && k % 4 === 0 && aSm === k && aSk === 1 &&
    bSk === 1 && bSn === k;
}

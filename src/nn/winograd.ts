// Winograd F(m x m, 3 x 3) convolution (Lavin & Gray 2015): the matrices, a CPU twin, and the
// WGSL of the three transforms, generated as straight-line code from the matrices (zero terms
// dropped). A 3x3 convolution becomes, per tile of m x m outputs:
//   U = G g G^T (filter, once per weight), V = B^T d B (input tile d of (m+2) x (m+2), pad 1),
//   M[xi] = sum_ci U[xi][co][ci] V[xi][ci][tile]  (one GEMM per transformed element xi),
//   Y = A^T M A.
// F(2x2,3x3) does 16 multiplies per 4 outputs (2.25x fewer than direct), F(4x4,3x3) 36 per 16 (4x),
// F(6x6,3x3) 64 per 36 (5.06x; on a 26 x 26 board 25 tiles of 64 against F(4x4)'s 49 of 36: 9 %
// fewer products, for about 2x F(4x4)'s f32 rounding error), F(7x7,3x3) 81 per 49 (5.44x; 16 tiles
// of 81 on 26 x 26: 27 % fewer products than F(4x4), for about 5x its f32 rounding error).
import { f16Prelude } from "./gpu/conv_gemm.ts";
import { KibitzError } from "../errors.ts";
import { conv2d } from "./cpu/conv.ts";
import { type CpuTensor, cpuTensor } from "./tensor.ts";

/** The output tile size m of F(m x m, 3 x 3). */
export type WinogradTile = 2 | 4 | 6 | 7;

export interface Matrices {
  /** B^T: a x a, A^T: m x a, G: a x 3 (a = m + 2). */
  bt: number[][];
  at: number[][];
  g: number[][];
}

/**
 * The Toom-Cook matrices of F(m x m, 3 x 3) from its m + 1 finite interpolation points and the
 * point at infinity (as Lavin's wincnn builds them): A^T[j][i] = p_i^j, G[i] = [1, p_i, p_i^2] /
 * prod_{k != i} (p_i - p_k), B^T[i] = the coefficients of prod_{k != i} (x - p_k); the infinity
 * row or column picks the highest-order term. It gives F(4x4)'s table, and F(6x6)'s up to a scale
 * of each G row against its B^T row.
 */
export function toomCook(points: readonly number[], m: number): Matrices {
  if (points.length !== m + 1) {
    throw new KibitzError("bad_args", `F(${m}x${m}, 3x3) needs ${m + 1} finite points`);
  }
  const times = (a: number[], b: number[]) => {
    const r = new Array(a.length + b.length - 1).fill(0);
    a.forEach((x, i) => b.forEach((y, k) => r[i + k] += x * y));
    return r;
  };
  const product = (skip: number) =>
    points.reduce((q, p, k) => (k === skip ? q : times(q, [-p, 1])), [1]);
  const at = Array.from(
    { length: m },
    (_, j) => [...points.map((p) => p ** j), j === m - 1 ? 1 : 0],
  );
  const g = points.map((p, i) => {
    const f = points.reduce((acc, q, k) => (k === i ? acc : acc * (p - q)), 1);
    return [1 / f, p / f, (p * p) / f];
  });
  const bt = points.map((_, i) => [...product(i), 0]);
  return { at, g: [...g, [0, 0, 1]], bt: [...bt, product(-1)] };
}

/**
 * F(7x7, 3x3)'s finite points, all exact in binary. F(6x6)'s points and an eighth gave 1.0e-4 to
 * 1.7e-4 (max error over max output, 32-channel sums in f32); a search over 0 with three +-pairs
 * and one more point from {1, 2, 3, 4, 1/2 ... 4/5} found these at 0.9e-5 to 2.2e-5 on two seeds
 * (its ten best all avoid +-1 with +-2 and +-1/2 together).
 */
const F7_POINTS = [0, 2, -2, 3 / 4, -3 / 4, 5 / 4, -5 / 4, 1 / 4];

const MATRICES: Record<WinogradTile, Matrices> = {
  2: {
    bt: [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
    g: [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]],
    at: [[1, 1, 1, 0], [0, 1, -1, -1]],
  },
  4: {
    bt: [
      [4, 0, -5, 0, 1, 0],
      [0, -4, -4, 1, 1, 0],
      [0, 4, -4, -1, 1, 0],
      [0, -2, -1, 2, 1, 0],
      [0, 2, -1, -2, 1, 0],
      [0, 4, 0, -5, 0, 1],
    ],
    g: [
      [1 / 4, 0, 0],
      [-1 / 6, -1 / 6, -1 / 6],
      [-1 / 6, 1 / 6, -1 / 6],
      [1 / 24, 1 / 12, 1 / 6],
      [1 / 24, -1 / 12, 1 / 6],
      [0, 0, 1],
    ],
    at: [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
  },
  // Interpolation points 0, +-1, +-2, +-1/2 and infinity (Lavin & Gray 2015; as NNPACK's
  // F(6x6,3x3)): 64 multiplies per 36 outputs.
  6: {
    bt: [
      [1, 0, -21 / 4, 0, 21 / 4, 0, -1, 0],
      [0, 1, 1, -17 / 4, -17 / 4, 1, 1, 0],
      [0, -1, 1, 17 / 4, -17 / 4, -1, 1, 0],
      [0, 1 / 2, 1 / 4, -5 / 2, -5 / 4, 2, 1, 0],
      [0, -1 / 2, 1 / 4, 5 / 2, -5 / 4, -2, 1, 0],
      [0, 2, 4, -5 / 2, -5, 1 / 2, 1, 0],
      [0, -2, 4, 5 / 2, -5, -1 / 2, 1, 0],
      [0, -1, 0, 21 / 4, 0, -21 / 4, 0, 1],
    ],
    g: [
      [1, 0, 0],
      [-2 / 9, -2 / 9, -2 / 9],
      [-2 / 9, 2 / 9, -2 / 9],
      [1 / 90, 1 / 45, 2 / 45],
      [1 / 90, -1 / 45, 2 / 45],
      [32 / 45, 16 / 45, 8 / 45],
      [32 / 45, -16 / 45, 8 / 45],
      [0, 0, 1],
    ],
    at: [
      [1, 1, 1, 1, 1, 1, 1, 0],
      [0, 1, -1, 2, -2, 1 / 2, -1 / 2, 0],
      [0, 1, 1, 4, 4, 1 / 4, 1 / 4, 0],
      [0, 1, -1, 8, -8, 1 / 8, -1 / 8, 0],
      [0, 1, 1, 16, 16, 1 / 16, 1 / 16, 0],
      [0, 1, -1, 32, -32, 1 / 32, -1 / 32, 1],
    ],
  },
  7: toomCook(F7_POINTS, 7),
};

/** The transform matrices of F(m x m, 3 x 3): B^T (a x a), A^T (m x a), G (a x 3), a = m + 2. */
export function winogradMatrices(m: WinogradTile): Readonly<Matrices> {
  return MATRICES[m];
}

/** Shape facts of a Winograd conv on an h x w image: tiles per side, per image, and in all. */
export function winogradGeometry(m: WinogradTile, n: number, h: number, w: number) {
  const th = Math.ceil(h / m), tw = Math.ceil(w / m), a = m + 2;
  const tiles = th * tw, p = n * tiles;
  return { a, alpha: a * a, th, tw, tiles, p };
}

/** Checks m is 2, 4, 6 or 7. */
export function winogradTile(m: number): WinogradTile {
  if (m === 2 || m === 4 || m === 6 || m === 7) return m;
  throw new KibitzError(
    "bad_args",
    `Winograd tile must be 2, 4, 6 or 7 (F(2x2,3x3), F(4x4,3x3), F(6x6,3x3), F(7x7,3x3)), got ${m}`,
  );
}

/** The matrix product a b (f64): the CPU twins' transforms. */
export function mul(a: number[][], b: number[][]): number[][] {
  return a.map((row) => b[0].map((_, j) => row.reduce((s, v, k) => s + v * b[k][j], 0)));
}

/** The transpose of a. */
export function tr(a: number[][]): number[][] {
  return a[0].map((_, j) => a.map((row) => row[j]));
}

/**
 * CPU twin of the Winograd convolution (3x3, pad 1, stride 1), transforms in f64, the transformed
 * products summed in f64: y [N, Co, H, W] from x [N, Ci, H, W] and w [Co, Ci, 3, 3]. `round`
 * (e.g. to f16) is applied to every stored V and M value: the twin of reduced-precision storage of
 * the transformed domain.
 */
export function winogradConv2d(
  x: CpuTensor,
  w: CpuTensor,
  m: WinogradTile,
  round: (v: number) => number = (v) => v,
): CpuTensor {
  const [n, ci, h, wd] = x.shape, co = w.shape[0];
  if (w.shape[2] !== 3 || w.shape[3] !== 3 || w.shape[1] !== ci) {
    throw new KibitzError("shape_mismatch", "Winograd convolution needs a [Co, Ci, 3, 3] weight");
  }
  const { bt, g, at } = MATRICES[m], { a, th, tw } = winogradGeometry(m, n, h, wd);
  const u: number[][][][] = [];
  for (let o = 0; o < co; o++) {
    u.push([]);
    for (let c = 0; c < ci; c++) {
      const k = [0, 1, 2].map((r) => [0, 1, 2].map((s) => w.data[((o * ci + c) * 3 + r) * 3 + s]));
      u[o].push(mul(mul(g, k), tr(g)));
    }
  }
  const y = cpuTensor([n, co, h, wd]);
  for (let b = 0; b < n; b++) {
    for (let ty = 0; ty < th; ty++) {
      for (let tx = 0; tx < tw; tx++) {
        const v: number[][][] = [];
        for (let c = 0; c < ci; c++) {
          const d = Array.from({ length: a }, (_, r) =>
            Array.from({ length: a }, (_, s) => {
              const iy = ty * m + r - 1, ix = tx * m + s - 1;
              return iy < 0 || ix < 0 || iy >= h || ix >= wd
                ? 0
                : x.data[((b * ci + c) * h + iy) * wd + ix];
            }));
          v.push(mul(mul(bt, d), tr(bt)).map((row) => row.map(round)));
        }
        for (let o = 0; o < co; o++) {
          const mm = Array.from({ length: a }, () => new Array(a).fill(0));
          for (let c = 0; c < ci; c++) {
            for (let r = 0; r < a; r++) {
              for (let s = 0; s < a; s++) mm[r][s] += u[o][c][r][s] * v[c][r][s];
            }
          }
          const out = mul(mul(at, mm.map((row) => row.map(round))), tr(at));
          for (let r = 0; r < m; r++) {
            for (let s = 0; s < m; s++) {
              const oy = ty * m + r, ox = tx * m + s;
              if (oy < h && ox < wd) y.data[((b * co + o) * h + oy) * wd + ox] = out[r][s];
            }
          }
        }
      }
    }
  }
  return y;
}

/**
 * CPU twin of the f16-product GEMM variants (`f16k`, src/nn/gpu/winograd_gemm.ts): U and V rounded
 * to f16 (the kernels' f16 workgroup tiles), the products summed in f16 over chunks of `chunk`
 * consecutive input channels (one rounding per fused multiply-add, `round16`: f16round), each
 * chunk's sum added in f32; M rounded by `roundM` (f16round for f16 V/M storage); transforms in
 * f64. y [N, Co, H, W] from x [N, Ci, H, W] and w [Co, Ci, 3, 3].
 */
export function winogradConv2dF16Products(
  x: CpuTensor,
  w: CpuTensor,
  m: WinogradTile,
  chunk: number,
  round16: (v: number) => number,
  roundM: (v: number) => number = (v) => v,
): CpuTensor {
  const [n, ci, h, wd] = x.shape, co = w.shape[0];
  if (w.shape[2] !== 3 || w.shape[3] !== 3 || w.shape[1] !== ci) {
    throw new KibitzError("shape_mismatch", "Winograd convolution needs a [Co, Ci, 3, 3] weight");
  }
  const { bt, g, at } = MATRICES[m], { a, th, tw } = winogradGeometry(m, n, h, wd);
  const alpha = a * a;
  // U[o][xi][c] and V[xi][c] in f16, flat.
  const u = new Float64Array(co * alpha * ci);
  for (let o = 0; o < co; o++) {
    for (let c = 0; c < ci; c++) {
      const k = [0, 1, 2].map((r) => [0, 1, 2].map((s) => w.data[((o * ci + c) * 3 + r) * 3 + s]));
      const uu = mul(mul(g, k), tr(g));
      for (let xi = 0; xi < alpha; xi++) {
        u[(o * alpha + xi) * ci + c] = round16(Math.fround(uu[Math.floor(xi / a)][xi % a]));
      }
    }
  }
  const y = cpuTensor([n, co, h, wd]);
  const v = new Float64Array(alpha * ci);
  for (let b = 0; b < n; b++) {
    for (let ty = 0; ty < th; ty++) {
      for (let tx = 0; tx < tw; tx++) {
        for (let c = 0; c < ci; c++) {
          const d = Array.from({ length: a }, (_, r) =>
            Array.from({ length: a }, (_, s) => {
              const iy = ty * m + r - 1, ix = tx * m + s - 1;
              return iy < 0 || ix < 0 || iy >= h || ix >= wd
                ? 0
                : x.data[((b * ci + c) * h + iy) * wd + ix];
            }));
          const vv = mul(mul(bt, d), tr(bt));
          for (let xi = 0; xi < alpha; xi++) {
            v[xi * ci + c] = round16(Math.fround(vv[Math.floor(xi / a)][xi % a]));
          }
        }
        for (let o = 0; o < co; o++) {
          const mm = Array.from({ length: a }, () => new Array(a).fill(0));
          for (let xi = 0; xi < alpha; xi++) {
            const ub = (o * alpha + xi) * ci, vb = xi * ci;
            let acc = 0;
            for (let c0 = 0; c0 < ci; c0 += chunk) {
              let hacc = 0;
              for (let c = c0; c < Math.min(ci, c0 + chunk); c++) {
                hacc = round16(u[ub + c] * v[vb + c] + hacc);
              }
              acc = Math.fround(acc + hacc);
            }
            mm[Math.floor(xi / a)][xi % a] = roundM(acc);
          }
          const out = mul(mul(at, mm), tr(at));
          for (let r = 0; r < m; r++) {
            for (let s = 0; s < m; s++) {
              const oy = ty * m + r, ox = tx * m + s;
              if (oy < h && ox < wd) y.data[((b * co + o) * h + oy) * wd + ox] = out[r][s];
            }
          }
        }
      }
    }
  }
  return y;
}

/** The direct reference, for comparisons. */
export { conv2d as directConv2d };

function lit(v: number): string {
  const s = String(v);
  return s.includes(".") || s.includes("e") ? s : `${s}.0`;
}

/** Straight-line code for out[i][j] = sum_k mat[i][k] in[k][j] (the transforms' products). */
export function applyRows(
  mat: number[][],
  src: (k: number, j: number) => string,
  cols: number,
  dst: (i: number, j: number) => string,
): string[] {
  const lines: string[] = [];
  for (let i = 0; i < mat.length; i++) {
    for (let j = 0; j < cols; j++) {
      const terms: string[] = [];
      mat[i].forEach((c, k) => {
        if (c === 0) return;
        const v = src(k, j);
        terms.push(c === 1 ? v : c === -1 ? `-${v}` : `${lit(c)} * ${v}`);
      });
      lines.push(
        `let ${dst(i, j)} = ${terms.length ? terms.join(" + ").replaceAll("+ -", "- ") : "0.0"};`,
      );
    }
  }
  return lines;
}

/** X = L D R^T as straight-line code over scalars named `${name}_r_c` (zero terms dropped). */
export function sandwich(
  l: number[][],
  r: number[][],
  src: string,
  mid: string,
  dst: string,
): string[] {
  // T = L D: rows of L, columns of D (k x k' where D is k x cols).
  const cols = r[0].length;
  const t = applyRows(l, (kk, j) => `${src}_${kk}_${j}`, cols, (i, j) => `${mid}_${i}_${j}`);
  // X = T R^T: X[i][j] = sum_k T[i][k] R[j][k].
  const x: string[] = [];
  for (let i = 0; i < l.length; i++) {
    for (let j = 0; j < r.length; j++) {
      const terms: string[] = [];
      r[j].forEach((c, kk) => {
        if (c === 0) return;
        const v = `${mid}_${i}_${kk}`;
        terms.push(c === 1 ? v : c === -1 ? `-${v}` : `${lit(c)} * ${v}`);
      });
      x.push(
        `let ${dst}_${i}_${j} = ${
          terms.length ? terms.join(" + ").replaceAll("+ -", "- ") : "0.0"
        };`,
      );
    }
  }
  return [...t, ...x];
}

/**
 * The input transform V = B^T d B of one tile as straight-line WGSL: `load(r, c)` reads the input
 * tile's value (r, c) ((m+2) x (m+2), from one row and column before the tile's outputs),
 * `store(xi, v)` stores transformed element xi (row-major) given its expression.
 */
export function inputTransformLines(
  m: WinogradTile,
  load: (r: number, c: number) => string,
  store: (xi: number, v: string) => string,
): string[] {
  const { bt } = MATRICES[m], a = m + 2;
  return [
    ...Array.from({ length: a * a }, (_, i) => {
      const r = Math.floor(i / a), c = i % a;
      return `let d_${r}_${c} = ${load(r, c)};`;
    }),
    ...sandwich(bt, bt, "d", "bd", "v"),
    ...Array.from({ length: a * a }, (_, xi) => store(xi, `v_${Math.floor(xi / a)}_${xi % a}`)),
  ];
}

/**
 * The output transform Y = A^T M A of one tile as straight-line WGSL: `load(xi)` reads transformed
 * element xi, `store(r, c, v)` stores output (r, c) of the m x m tile given its expression.
 */
export function outputTransformLines(
  m: WinogradTile,
  load: (xi: number) => string,
  store: (r: number, c: number, v: string) => string,
): string[] {
  const { at } = MATRICES[m], a = m + 2;
  return [
    ...Array.from(
      { length: a * a },
      (_, xi) => `let q_${Math.floor(xi / a)}_${xi % a} = ${load(xi)};`,
    ),
    ...sandwich(at, at, "q", "aq", "r"),
    ...Array.from({ length: m * m }, (_, i) => {
      const r = Math.floor(i / m), c = i % m;
      return store(r, c, `r_${r}_${c}`);
    }),
  ];
}

/**
 * WGSL of the three transforms for F(m x m, 3x3):
 * `filter`: U[xi, co, ci] from W [Co, Ci, 3, 3] (one thread per (co, ci));
 * `input`: V[xi, ci, q] from X [N, Ci, H, W], q = n tiles + tile < P, padded to p.ppad columns
 * (one thread per (n, ci, tile));
 * `output`: Y [N, Co, H, W] = act(A^T M A + bias + res) from M[xi, co, q] (one thread per
 * (n, co, tile)). `transformed` f16 stores V and M as s16 (f32 arithmetic, one rounding each).
 * `splits` > 1: M holds a split-K GEMM's partials, [alpha, splits, Co, ppad], which the output
 * transforms add (in split order) as they read them.
 */
export function winogradSource(
  m: WinogradTile,
  storage: "f32" | "f16" | "f16-emulated" = "f32",
  transformed: "f32" | "f16" | "f16-emulated" = "f32",
  scaled = false,
  planes = false,
  splits = 1,
): string {
  const { g, at } = MATRICES[m];
  // f16 storage: the activations x, res and y are s16 (converted on load, rounded on store); the
  // transformed V and M are s16 too when `transformed` is f16 (U stays f32).
  const half = storage !== "f32";
  const act = half ? "s16" : "f32";
  const ld = half ? (e: string) => `f32(${e})` : (e: string) => e;
  const tHalf = transformed !== "f32";
  if (half && tHalf && storage !== transformed) {
    throw new Error(`Winograd transforms: storage ${storage} with transformed ${transformed}`);
  }
  const vm = tHalf ? "s16" : "f32";
  // `scaled`: a power of two S from gscale = [S, 1/S] multiplies what the input transform stores
  // and what the output-gradient transform reads, and 1/S what the output and filter-gradient
  // transforms read (exact, and placed where the compiled arithmetic stays that of the unscaled
  // kernels: f16 storage of small gradients, see shaders/nn/gradscale.wgsl).
  const up = scaled ? " * gscale[0]" : "", down = scaled ? " * gscale[1]" : "";
  const prelude = half ? f16Prelude(storage) : tHalf ? f16Prelude(transformed) : "";
  const a = m + 2, alpha = a * a;
  const gi = [0, 1, 2];
  const filter = [
    ...gi.flatMap((r) => gi.map((s) => `let k_${r}_${s} = w[base + ${r * 3 + s}u];`)),
    ...sandwich(g, g, "k", "gk", "u"),
    ...Array.from(
      { length: alpha },
      (_, xi) => `u_out[${xi}u * stride + o] = u_${Math.floor(xi / a)}_${xi % a};`,
    ),
  ];
  const input = inputTransformLines(
    m,
    (r, c) => `ld(xb, y0 + ${r - 1}, x0 + ${c - 1})`,
    (xi, v) => `v_out[${xi}u * stride + o] = ${tHalf ? `s16(${v}${up})` : `${v}${up}`};`,
  );
  // Training's weight gradient: dM = A dY A^T per output tile (the adjoint of the output
  // transform), and dW = G^T dU G (the adjoint of the filter transform), dU summed over splits.
  const atT = tr(at), gT = tr(g);
  const dout = [
    ...Array.from(
      { length: m },
      (_, r) =>
        Array.from(
          { length: m },
          (_, s) => `let e_${r}_${s} = ldo(xb, y0 + ${r}, x0 + ${s})${up};`,
        ),
    ).flat(),
    ...sandwich(atT, atT, "e", "ae", "f"),
    ...Array.from(
      { length: alpha },
      (_, xi) =>
        `v_out[${xi}u * stride + o] = ${tHalf ? "s16(" : ""}f_${Math.floor(xi / a)}_${xi % a}${
          tHalf ? ")" : ""
        };`,
    ),
  ];
  const fgrad = [
    ...Array.from({ length: alpha }, (_, xi) => {
      const sum = `var s_${xi} = 0.0;
  for (var r = 0u; r < p.n; r++) { s_${xi} += ${
        tHalf ? "f32(" : ""
      }mm[(r * ${alpha}u + ${xi}u) * stride + o]${tHalf ? ")" : ""}; }
  let d_${Math.floor(xi / a)}_${xi % a} = s_${xi}${down};`;
      return sum;
    }),
    ...sandwich(gT, gT, "d", "gd", "k"),
    ...gi.flatMap((r) => gi.map((s) => `u_out[o * 9u + ${r * 3 + s}u] = k_${r}_${s};`)),
  ];
  // M[xi] of the thread's tile, as the output transforms read it.
  const readM = (j: number) => (tHalf ? `f32(mm[${j}u * stride + o])` : `mm[${j}u * stride + o]`);
  const loadM = (xi: number) =>
    splits === 1
      ? `${readM(xi)}${down}`
      : `(${Array.from({ length: splits }, (_, s) => readM(xi * splits + s)).join(" + ")})${down}`;
  const output = outputTransformLines(
    m,
    loadM,
    (r, c, v) => `st(yb, y0 + ${r}, x0 + ${c}, ${v}, bv);`,
  );
  const ind = (ls: string[]) => ls.map((l) => `  ${l}`).join("\n");
  const planeOutput = planes
    ? outputPlanesSource(
      m,
      half,
      outputTransformLines(
        m,
        loadM,
        (r, c, v) => `ost(pb + ${r}u * gw + ${c}u, ${v});`,
      ),
    )
    : "";
  return `${prelude}// Generated by src/nn/winograd.ts: Winograd F(${m}x${m}, 3x3) transforms.
${TRANSFORM_STRUCTS}

${transformBindingsWgsl(act, vm, scaled)}

// U[xi, co, ci] (stride Co Ci per xi).
@compute @workgroup_size(64)
fn wino_filter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let o = index(gid, nwg);
  let stride = p.co * p.ci;
  if (o >= stride) { return; }
  let base = o * 9u;
${ind(filter)}
}

${inputLoadWgsl(half)}

// V[xi, ci, q] (stride Ci ppad per xi), q = img tiles + tile.
@compute @workgroup_size(64)
fn wino_input(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n * p.ci * p.tiles) { return; }
  let t = i % p.tiles;
  let c = (i / p.tiles) % p.ci;
  let img = i / (p.tiles * p.ci);
  let ty = t / p.tw;
  let y0 = i32(ty * ${m}u);
  let x0 = i32((t - ty * p.tw) * ${m}u);
  let xb = (img * p.ci + c) * p.h * p.w;
  let stride = p.ci * p.ppad;
  let o = c * p.ppad + img * p.tiles + t;
${ind(input)}
}

${outputStoreWgsl(half)}

fn ldo(xb: u32, iy: u32, ix: u32) -> f32 {
  if (iy >= p.h || ix >= p.w) { return 0.0; }
  return ${ld("x[xb + iy * p.w + ix]")};
}

// Weight gradient, step 1: dM[xi, c, q] = (A dY A^T)[xi] of the output-gradient tile (x = dY with
// p.ci = its channels; stride Ci ppad per xi), the adjoint of wino_output.
@compute @workgroup_size(64)
fn wino_dout(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n * p.ci * p.tiles) { return; }
  let t = i % p.tiles;
  let c = (i / p.tiles) % p.ci;
  let img = i / (p.tiles * p.ci);
  let ty = t / p.tw;
  let y0 = ty * ${m}u;
  let x0 = (t - ty * p.tw) * ${m}u;
  let xb = (img * p.ci + c) * p.h * p.w;
  let stride = p.ci * p.ppad;
  let o = c * p.ppad + img * p.tiles + t;
${ind(dout)}
}

// Weight gradient, step 3: dW[co, ci] = G^T dU G, dU[xi, co, ci] summed over p.n split-K partials
// (mm = [splits, alpha, Co, Ci]); the adjoint of wino_filter.
@compute @workgroup_size(64)
fn wino_filter_grad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let o = index(gid, nwg);
  let stride = p.co * p.ci;
  if (o >= stride) { return; }
${ind(fgrad)}
}

// Y[img, co] tile t from M[xi, co, q] (stride Co ppad per xi), epilogue fused.
@compute @workgroup_size(64)
fn wino_output(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n * p.co * p.tiles) { return; }
  let t = i % p.tiles;
  let c = (i / p.tiles) % p.co;
  let img = i / (p.tiles * p.co);
  let ty = t / p.tw;
  let y0 = ty * ${m}u;
  let x0 = (t - ty * p.tw) * ${m}u;
  let yb = (img * p.co + c) * p.h * p.w;
  let stride = p.co * p.ppad;
  let o = c * p.ppad + img * p.tiles + t;
  let bv = bias[c];
${ind(output)}
}
${planeOutput}`;
}

/** The transforms' uniforms: Params (geometry) and Fuse (the output transforms' epilogue). */
export const TRANSFORM_STRUCTS =
  `struct Params { n: u32, ci: u32, co: u32, h: u32, w: u32, tw: u32, tiles: u32, ppad: u32 }
struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }`;

/**
 * The input transforms' load `ld(xb, iy, ix)`: x inside the image, 0 outside (the conv's padding);
 * f16 activations converted on load where `half`.
 */
export function inputLoadWgsl(half: boolean): string {
  const at = "x[xb + u32(iy) * p.w + u32(ix)]";
  return `fn ld(xb: u32, iy: i32, ix: i32) -> f32 {
  if (iy < 0 || ix < 0 || iy >= i32(p.h) || ix >= i32(p.w)) { return 0.0; }
  return ${half ? `f32(${at})` : at};
}`;
}

/**
 * The bindings of a module holding all three transforms (0 W, 1 U, 2 x, 3 V, then
 * outputBindingsWgsl's), activations stored as `act`, V and M as `vm`, and the 2D thread index
 * `index` of their dispatches (workgroups1d, 64 threads a workgroup).
 */
export function transformBindingsWgsl(act: string, vm: string, scaled: boolean): string {
  return `@group(0) @binding(0) var<storage, read> w: array<f32>;
@group(0) @binding(1) var<storage, read_write> u_out: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<${act}>;
@group(0) @binding(3) var<storage, read_write> v_out: array<${vm}>;
${outputBindingsWgsl(act, vm, scaled)}
fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}`;
}

/**
 * The output transforms' bindings from M on (4 M, 5 bias, 6 res, 7 y, 8 Params, 9 Fuse, 10 gscale
 * where `scaled`), activations stored as `act`, M as `vm` (WGSL types).
 */
export function outputBindingsWgsl(act: string, vm: string, scaled: boolean): string {
  return `@group(0) @binding(4) var<storage, read> mm: array<${vm}>;
@group(0) @binding(5) var<storage, read> bias: array<f32>;
@group(0) @binding(6) var<storage, read> res: array<${act}>;
@group(0) @binding(7) var<storage, read_write> y: array<${act}>;
@group(0) @binding(8) var<uniform> p: Params;
@group(0) @binding(9) var<uniform> fz: Fuse;
${scaled ? "@group(0) @binding(10) var<storage, read> gscale: array<f32>;\n" : ""}`;
}

/**
 * The output transforms' epilogue and store, `st(yb, oy, ox, v, bias)`: y = act(v + bias + res)
 * inside the image (f16 activations converted on load and rounded on store where `half`).
 */
export function outputStoreWgsl(half: boolean): string {
  return `fn st(yb: u32, oy: u32, ox: u32, v: f32, bv: f32) {
  if (oy >= p.h || ox >= p.w) { return; }
  let at = yb + oy * p.w + ox;
  var r = v + bv;
  if (fz.res != 0u) { r += ${half ? "f32(res[at])" : "res[at]"}; }
  if (fz.relu != 0u) { r = max(r, 0.0); }
  y[at] = ${half ? "s16(r)" : "r"};
}`;
}

/**
 * Floats of workgroup memory the plane-staged output transform keeps: one 26 x 26 plane's tile grid
 * at any tile (F(6x6)'s 30 x 30 the largest). Not more: WebGPU zero-initializes workgroup memory,
 * and llvmpipe took 8 minutes to compile that for 4096 floats (1 minute as 1024 vec4s, 8 s as 256).
 */
export const OUTPUT_PLANE_FLOATS = 1024;

/**
 * Planes (image, channel) one workgroup of the plane-staged output transform takes for an h x w
 * image at F(m x m): as many as fit OUTPUT_PLANE_FLOATS (at most 16), the count that leaves the
 * fewest of its 64 threads idle in the tile phase; 0 where one plane's tile grid does not fit.
 */
export function outputPlanesPerGroup(m: WinogradTile, h: number, w: number): number {
  const { th, tw, tiles } = winogradGeometry(m, 1, h, w);
  const most = Math.min(16, Math.floor(OUTPUT_PLANE_FLOATS / (th * m * tw * m)));
  let best = 0, use = -1;
  for (let pg = 1; pg <= most; pg++) {
    const jobs = pg * tiles, u = jobs / (Math.ceil(jobs / 64) * 64);
    if (u >= use) [best, use] = [pg, u];
  }
  return best;
}

/**
 * The plane-staged output transform (entry wino_output_planes, 64 threads): a workgroup takes
 * fz._a consecutive planes (outputPlanesPerGroup), writes each tile's A^T M A into workgroup memory
 * (one thread a tile), then writes the planes' outputs in order with the epilogue, so consecutive
 * threads store consecutive floats (wino_output's threads store m floats apart). Same arithmetic
 * and epilogue order as wino_output.
 */
function outputPlanesSource(m: WinogradTile, half: boolean, lines: string[]): string {
  const ind = (ls: string[]) => ls.map((l) => `    ${l}`).join("\n");
  return `
// vec4 elements: a quarter as many stores in the zero initialization WebGPU adds.
var<workgroup> oplane: array<vec4<f32>, ${OUTPUT_PLANE_FLOATS / 4}>;

fn ost(i: u32, v: f32) { oplane[i >> 2u][i & 3u] = v; }

@compute @workgroup_size(64)
fn wino_output_planes(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) li: u32,
) {
  let pg = fz._a;
  let gw = p.tw * ${m}u;
  let gsz = (p.tiles / p.tw) * ${m}u * gw;
  let first = (wid.x + wid.y * nwg.x) * pg;
  let total = p.n * p.co;
  let stride = p.co * p.ppad;
  for (var j = li; j < pg * p.tiles; j += 64u) {
    let lp = j / p.tiles;
    let pl = first + lp;
    if (pl >= total) { break; }
    let t = j - lp * p.tiles;
    let c = pl % p.co;
    let img = pl / p.co;
    let ty = t / p.tw;
    let o = c * p.ppad + img * p.tiles + t;
    let pb = lp * gsz + ty * ${m}u * gw + (t - ty * p.tw) * ${m}u;
${ind(lines)}
  }
  workgroupBarrier();
  let hw = p.h * p.w;
  for (var lp = 0u; lp < pg; lp++) {
    let pl = first + lp;
    if (pl >= total) { break; }
    let bv = bias[pl % p.co];
    for (var q = li; q < hw; q += 64u) {
      let oy = q / p.w;
      let at = pl * hw + q;
      let i = lp * gsz + oy * gw + q - oy * p.w;
      var r = oplane[i >> 2u][i & 3u] + bv;
      if (fz.res != 0u) { r += ${half ? "f32(res[at])" : "res[at]"}; }
      if (fz.relu != 0u) { r = max(r, 0.0); }
      y[at] = ${half ? "s16(r)" : "r"};
    }
  }
}
`;
}

/** Which convolution algorithm 3x3 inference layers use: direct, Winograd by shape, or forced. */
export type WinogradSetting = "off" | "auto" | WinogradTile;

/** Parses "off", "auto", "2", "4", "6" or "7" (the KIBITZ_NN_WINOGRAD values). */
export function parseWinograd(v: string): WinogradSetting {
  if (v === "off" || v === "0") return "off";
  if (v === "auto") return "auto";
  if (v === "2" || v === "4" || v === "6" || v === "7") return Number(v) as WinogradTile;
  throw new KibitzError(
    "bad_args",
    `Winograd setting must be off, auto, 2, 4, 6 or 7, got "${v}"`,
  );
}

/** The tile a setting computes filter transforms for (auto: F(4x4,3x3)), or 0 when off. */
export function winogradSettingTile(s: WinogradSetting): 0 | WinogradTile {
  return s === "off" ? 0 : s === "auto" ? 4 : s;
}

/**
 * The selection table: the Winograd tile a 3x3 layer of this shape uses, 0 for the direct GEMM.
 * `auto` takes F(4x4,3x3) where its GEMMs are large enough to run near the direct GEMM's
 * efficiency (at least 1024 tile columns, i.e. batch >= 21 on a 26 x 26 board, and 64+ channels
 * in and out); smaller layers stay direct (their cost is launch and readback, not FLOPs).
 */
export function chooseWinograd(
  s: WinogradSetting,
  n: number,
  h: number,
  w: number,
  ci: number,
  co: number,
): 0 | WinogradTile {
  if (s === "off") return 0;
  if (s !== "auto") return s;
  const { p } = winogradGeometry(4, n, h, w);
  return p >= 1024 && ci >= 64 && co >= 64 ? 4 : 0;
}

/** Columns of the transformed-domain GEMM: P tiles rounded up to a multiple of 128. */
export function winogradColumns(p: number): number {
  return Math.ceil(p / 128) * 128;
}

// Winograd convolution with mixed tiles: F(7x7, 3x3) and F(6x6, 3x3) tiles side by side, so that
// an image whose side is not a multiple of 7 is covered exactly. A 26 x 26 board takes 7, 7, 6, 6
// along each side: four classes of tiles (7 x 7, 7 x 6, 6 x 7, 6 x 6 outputs, 9 x 9, 9 x 8, 8 x 9
// and 8 x 8 transformed elements), 4 x 289 = 1,156 transformed elements an image against F(7x7)'s
// 16 x 81 = 1,296 (28 x 28 covered): 10.8 % fewer products in the GEMM, and 10.8 % less V and M
// traffic. Each class's elements are GEMM slices of their own, laid out one class after another:
// U [289, Co, Ci], V [289, Ci, ppad], M [289, Co, ppad], column = image's tiles of the class +
// tile. The batched GEMM of the square tiles runs them unchanged (289 slices instead of 81); only
// the transforms are new: X = L D R^T with the row class's matrix on the left and the column
// class's on the right (U = G_r g G_c^T, V = B_r^T d B_c, Y = A_r^T M A_c).
import { f16Prelude } from "./gpu/conv_gemm.ts";
import { KibitzError } from "../errors.ts";
import { type CpuTensor, cpuTensor } from "./tensor.ts";
import {
  inputLoadWgsl,
  mul,
  outputStoreWgsl,
  sandwich,
  tr,
  TRANSFORM_STRUCTS,
  transformBindingsWgsl,
  winogradMatrices,
} from "./winograd.ts";

/** One class of tiles: its output sizes along y and x and where its tiles and slices lie. */
export interface MixedClass {
  /** Output rows and columns of a tile (7 or 6). */
  mr: 6 | 7;
  mc: 6 | 7;
  /** Transformed rows and columns (m + 2). */
  ar: number;
  ac: number;
  /** First GEMM slice of the class (its ar ac slices follow). */
  offset: number;
  /** Tile rows and columns of the class in one image, and where its first tile starts. */
  th: number;
  tw: number;
  y0: number;
  x0: number;
  /** Tiles of the class in one image (th tw). */
  tiles: number;
}

/** How an h x w image is cut into F(7x7) and F(6x6) tiles. */
export interface MixedTiling {
  h: number;
  w: number;
  /** Tiles of 7 and of 6 along each side (7 ones first). */
  rows: { sevens: number; sixes: number };
  cols: { sevens: number; sixes: number };
  classes: MixedClass[];
  /** GEMM slices: every class's transformed elements (289 where all four classes exist). */
  alpha: number;
  /** GEMM columns an image needs: its largest class's tiles. */
  tiles: number;
}

/**
 * One side of `n` cells as F(7) and F(6) tiles covering it exactly with as few tiles as F(7x7)
 * takes (ceil(n / 7)), or null where that needs no F(6) tile or no F(7) tile (F(7x7) or F(6x6)
 * alone covers it as well).
 */
function side(n: number): { sevens: number; sixes: number } | null {
  const t = Math.ceil(n / 7), sevens = n - 6 * t;
  return sevens > 0 && sevens < t ? { sevens, sixes: t - sevens } : null;
}

/**
 * The mixed tiling of an h x w image, or null where it does not pay: each side must be covered
 * exactly by 7s and 6s in ceil(side / 7) tiles with both sizes present (26 = 7 + 7 + 6 + 6; 28 is
 * F(7x7)'s, 24 F(6x6)'s).
 */
export function mixedTiling(h: number, w: number): MixedTiling | null {
  const rows = side(h), cols = side(w);
  if (!rows || !cols) return null;
  const classes: MixedClass[] = [];
  let offset = 0;
  for (const mr of [7, 6] as const) {
    for (const mc of [7, 6] as const) {
      const th = mr === 7 ? rows.sevens : rows.sixes, tw = mc === 7 ? cols.sevens : cols.sixes;
      const ar = mr + 2, ac = mc + 2;
      classes.push({
        mr,
        mc,
        ar,
        ac,
        offset,
        th,
        tw,
        y0: mr === 7 ? 0 : 7 * rows.sevens,
        x0: mc === 7 ? 0 : 7 * cols.sevens,
        tiles: th * tw,
      });
      offset += ar * ac;
    }
  }
  return {
    h,
    w,
    rows,
    cols,
    classes,
    alpha: offset,
    tiles: Math.max(...classes.map((c) => c.tiles)),
  };
}

/** The mixed tiling of h x w, or a clear error where it has none. */
export function expectMixedTiling(h: number, w: number): MixedTiling {
  const t = mixedTiling(h, w);
  if (!t) {
    throw new KibitzError(
      "bad_args",
      `mixed F(7x7)/F(6x6) tiles need each side to be 7s and 6s in ceil(side / 7) tiles, both present (26 = 7 + 7 + 6 + 6); got ${h} x ${w}`,
    );
  }
  return t;
}

/** Filter transform rows (GEMM slices) of the mixed tiling of h x w, 0 where it has none. */
export function mixedAlpha(h: number, w: number): number {
  return mixedTiling(h, w)?.alpha ?? 0;
}

/**
 * CPU twin of the mixed-tile Winograd convolution (3x3, pad 1, stride 1), transforms and sums in
 * f64: y [N, Co, H, W] from x [N, Ci, H, W] and w [Co, Ci, 3, 3].
 */
export function winogradMixedConv2d(x: CpuTensor, w: CpuTensor): CpuTensor {
  const [n, ci, h, wd] = x.shape, co = w.shape[0];
  if (w.shape[2] !== 3 || w.shape[3] !== 3 || w.shape[1] !== ci) {
    throw new KibitzError("shape_mismatch", "Winograd convolution needs a [Co, Ci, 3, 3] weight");
  }
  const t = expectMixedTiling(h, wd);
  const y = cpuTensor([n, co, h, wd]);
  for (const k of t.classes) {
    const r = winogradMatrices(k.mr), c = winogradMatrices(k.mc);
    const u: number[][][][] = [];
    for (let o = 0; o < co; o++) {
      u.push([]);
      for (let q = 0; q < ci; q++) {
        const g = [0, 1, 2].map((a) =>
          [0, 1, 2].map((b) => w.data[((o * ci + q) * 3 + a) * 3 + b])
        );
        u[o].push(mul(mul(r.g, g), tr(c.g)));
      }
    }
    for (let b = 0; b < n; b++) {
      for (let ty = 0; ty < k.th; ty++) {
        for (let tx = 0; tx < k.tw; tx++) {
          const y0 = k.y0 + ty * k.mr, x0 = k.x0 + tx * k.mc;
          const v = Array.from({ length: ci }, (_, q) => {
            const d = Array.from(
              { length: k.ar },
              (_, i) =>
                Array.from({ length: k.ac }, (_, j) => {
                  const iy = y0 + i - 1, ix = x0 + j - 1;
                  return iy < 0 || ix < 0 || iy >= h || ix >= wd
                    ? 0
                    : x.data[((b * ci + q) * h + iy) * wd + ix];
                }),
            );
            return mul(mul(r.bt, d), tr(c.bt));
          });
          for (let o = 0; o < co; o++) {
            const mm = Array.from({ length: k.ar }, () => new Array(k.ac).fill(0));
            for (let q = 0; q < ci; q++) {
              for (let i = 0; i < k.ar; i++) {
                for (let j = 0; j < k.ac; j++) mm[i][j] += u[o][q][i][j] * v[q][i][j];
              }
            }
            const out = mul(mul(r.at, mm), tr(c.at));
            for (let i = 0; i < k.mr; i++) {
              for (let j = 0; j < k.mc; j++) {
                y.data[((b * co + o) * h + y0 + i) * wd + x0 + j] = out[i][j];
              }
            }
          }
        }
      }
    }
  }
  return y;
}

/**
 * WGSL of the mixed-tile transforms for an h x w image (bindings and Params as winogradSource's,
 * p.tiles = the tiling's `tiles`, V and M f32; f16 activations where `storage` says so):
 * `mixed_filter`: U[slice, co, ci] (one thread a (co, ci), all classes);
 * `mixed_input`: V[slice, ci, q], q = image's tiles of the class + tile (one thread a (class, ci,
 * image, tile): classes one after another, so a warp rarely holds two, and consecutive threads
 * on consecutive columns q, so V's stores and M's loads are contiguous runs);
 * `mixed_output`: Y = act(A_r^T M A_c + bias + res) (one thread a (class, co, image, tile)).
 */
export function winogradMixedSource(
  t: MixedTiling,
  storage: "f32" | "f16" | "f16-emulated" = "f32",
): string {
  const half = storage !== "f32";
  const act = half ? "s16" : "f32";
  const ind = (ls: string[], pad = "    ") => ls.map((l) => `${pad}${l}`).join("\n");
  const filter = t.classes.map((k) => {
    const r = winogradMatrices(k.mr), c = winogradMatrices(k.mc);
    return [
      "{",
      ...ind(sandwich(r.g, c.g, "k", "gk", "u"), "  ").split("\n"),
      ...Array.from(
        { length: k.ar * k.ac },
        (_, xi) =>
          `  u_out[${k.offset + xi}u * stride + o] = u_${Math.floor(xi / k.ac)}_${xi % k.ac};`,
      ),
      "}",
    ];
  }).flat();
  // Per class: the threads before it (classes in order), then its (image, channel, tile) index.
  const branches = (
    chans: string,
    body: (k: MixedClass) => string[],
  ) => {
    let before = "0u";
    return t.classes.map((k, i) => {
      const end = `${before} + ${chans} * ${k.tiles}u`;
      const head = `${i ? " else " : ""}if (i < ${end}) {
    let j = i - (${before});
    let t = j % ${k.tiles}u;
    let img = (j / ${k.tiles}u) % p.n;
    let c = j / (${k.tiles}u * p.n);
    let ty = t / ${k.tw}u;
    let y0 = ${k.y0}u + ty * ${k.mr}u;
    let x0 = ${k.x0}u + (t - ty * ${k.tw}u) * ${k.mc}u;
    let o = c * p.ppad + img * ${k.tiles}u + t;`;
      before = `(${end})`;
      return `${head}\n${ind(body(k))}\n  }`;
    }).join("");
  };
  const input = branches("pc", (k) => {
    const r = winogradMatrices(k.mr), c = winogradMatrices(k.mc);
    return [
      "let xb = (img * p.ci + c) * p.h * p.w;",
      ...Array.from({ length: k.ar * k.ac }, (_, e) => {
        const a = Math.floor(e / k.ac), b = e % k.ac;
        return `let d_${a}_${b} = ld(xb, i32(y0) + ${a - 1}, i32(x0) + ${b - 1});`;
      }),
      ...sandwich(r.bt, c.bt, "d", "bd", "v"),
      ...Array.from(
        { length: k.ar * k.ac },
        (_, xi) =>
          `v_out[${k.offset + xi}u * stride + o] = v_${Math.floor(xi / k.ac)}_${xi % k.ac};`,
      ),
    ];
  });
  const output = branches("pco", (k) => {
    const r = winogradMatrices(k.mr), c = winogradMatrices(k.mc);
    return [
      "let yb = (img * p.co + c) * p.h * p.w;",
      "let bv = bias[c];",
      ...Array.from(
        { length: k.ar * k.ac },
        (_, xi) =>
          `let q_${Math.floor(xi / k.ac)}_${xi % k.ac} = mm[${k.offset + xi}u * stride + o];`,
      ),
      ...sandwich(r.at, c.at, "q", "aq", "r"),
      ...Array.from({ length: k.mr * k.mc }, (_, e) => {
        const a = Math.floor(e / k.mc), b = e % k.mc;
        return `st(yb, y0 + ${a}u, x0 + ${b}u, r_${a}_${b}, bv);`;
      }),
    ];
  });
  return `${
    half ? f16Prelude(storage) : ""
  }// Generated by src/nn/winograd_mixed.ts: Winograd with F(7x7) and F(6x6) tiles on ${t.h} x ${t.w}.
${TRANSFORM_STRUCTS}

${transformBindingsWgsl(act, "f32", false)}

// U[slice, co, ci] (stride Co Ci per slice), every class.
@compute @workgroup_size(64)
fn mixed_filter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let o = index(gid, nwg);
  let stride = p.co * p.ci;
  if (o >= stride) { return; }
  let base = o * 9u;
${
    ind(
      [0, 1, 2].flatMap((a) => [0, 1, 2].map((b) => `let k_${a}_${b} = w[base + ${a * 3 + b}u];`)),
      "  ",
    )
  }
${ind(filter, "  ")}
}

${inputLoadWgsl(half)}

// V[slice, ci, q] (stride Ci ppad per slice).
@compute @workgroup_size(64)
fn mixed_input(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  let pc = p.n * p.ci;
  let stride = p.ci * p.ppad;
  ${input}
}

${outputStoreWgsl(half)}

// Y[img, co] from M[slice, co, q] (stride Co ppad per slice), epilogue fused.
@compute @workgroup_size(64)
fn mixed_output(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  let pco = p.n * p.co;
  let stride = p.co * p.ppad;
  ${output}
}
`;
}

/** Threads of the mixed input (channels = Ci) or output (channels = Co) transform for n images. */
export function mixedThreads(t: MixedTiling, n: number, channels: number): number {
  return n * channels * t.classes.reduce((s, k) => s + k.tiles, 0);
}

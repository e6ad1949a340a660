// WGSL source generator for the tiled implicit-GEMM convolution kernels (the hardware path).
//
// WGSL has no templates and compilers differ in how far they unroll loops over private arrays (a
// dynamically indexed accumulator array can land in slow local memory), so the register tile is
// written out statement by statement here: every accumulator is a named vec4 and every inner-loop
// step is straight-line code. Shapes and strides that vary per layer stay runtime uniforms; the
// kernel size is baked in so the im2col index divisions are by constants.
//
// Thread (tx, ty) of a WX x WY workgroup owns GM x GN blocks of 4 x 4 outputs: rows
// g * 4WY + 4ty + i and columns h * 4WX + 4tx + j. The K slices (BK deep) are staged in workgroup
// memory as vec4 rows (A as [k][m], B as [k][n]), so each step reads GM + GN vec4s and issues
// 4 GM GN vec4 FMAs; the next slice's global loads are held in registers while this one computes.

/** Tile shape of one generated kernel. */
export interface ConvTile {
  /** Threads along the output columns and rows. */
  wx: number;
  wy: number;
  /** 4x4 register blocks per thread along rows (gm) and columns (gn). */
  gm: number;
  gn: number;
  /** Depth of one K slice staged in workgroup memory. */
  bk: number;
}

/** Output rows and columns of one workgroup. */
export function tileSize(t: ConvTile): { bm: number; bn: number } {
  return { bm: 4 * t.wy * t.gm, bn: 4 * t.wx * t.gn };
}

function checkTile(t: ConvTile): void {
  const threads = t.wx * t.wy, { bm, bn } = tileSize(t);
  const ok = threads % t.bk === 0 && threads % bn === 0 && (bm * t.bk) % threads === 0 &&
    (bn * t.bk) % threads === 0 && bm % (threads / t.bk) === 0 && bn % (threads / t.bk) === 0;
  if (!ok) throw new Error(`conv tile ${JSON.stringify(t)} does not divide into its threads`);
}

/**
 * Storage of the forward kernel's tensors: `f32`, or f16 storage with f32 accumulation (`f16`:
 * `enable f16;`, needs the device feature `shader-f16`), or `f16-emulated`: the same f16 kernel text
 * with the storage alias bound to f32, so software adapters without `shader-f16` run (and test) the
 * f16 code path. `out32`: the output stays f32 (split-K partials summed by a separate kernel).
 */
export type ConvStorage = "f32" | "f16" | "f16-emulated";

/** The f16 kernels' prelude: the storage alias `s16` (f16, or f32 when emulated). */
export function f16Prelude(storage: "f16" | "f16-emulated"): string {
  return storage === "f16" ? "enable f16;\nalias s16 = f16;\n\n" : "alias s16 = f32;\n\n";
}

function header(inT: string, outT: string): string {
  return `struct Params { n: u32, ci: u32, co: u32, h: u32, w: u32, k: u32, pad: u32, kchunk: u32 }

@group(0) @binding(0) var<storage, read> in0: array<${inT}>;
@group(0) @binding(1) var<storage, read> in1: array<${inT}>;
@group(0) @binding(2) var<storage, read_write> out: array<${outT}>;
@group(0) @binding(3) var<uniform> p: Params;
`;
}

const HEADER = header("f32", "f32");

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The shared part: declarations and im2col reader, and one unrolled step of the slice multiply. */
function common(
  t: ConvTile,
  ks: number,
  head = HEADER,
  load = (e: string) => e,
): { decls: string; step: string } {
  const { bm, bn } = tileSize(t);
  const step: string[] = [];
  for (const g of range(t.gm)) step.push(`let a${g} = As[base_a + ${g * t.wy}u];`);
  for (const h of range(t.gn)) step.push(`let b${h} = Bs[base_b + ${h * t.wx}u];`);
  for (const g of range(t.gm)) {
    for (const i of range(4)) {
      for (const h of range(t.gn)) {
        step.push(`acc_${g}_${i}_${h} = fma(vec4<f32>(a${g}[${i}]), b${h}, acc_${g}_${i}_${h});`);
      }
    }
  }
  const decls = `${head}
const KS = ${ks}u;
const KK = ${ks * ks}u;
const BK = ${t.bk}u;
const BM4 = ${bm / 4}u;
const BN4 = ${bn / 4}u;
var<workgroup> As: array<vec4<f32>, ${(t.bk * bm) / 4}>;
var<workgroup> Bs: array<vec4<f32>, ${(t.bk * bn) / 4}>;

// im2col(X)[k, col] for the pixel (img, y, x) of col; zero outside the image or past the K range.
fn im2col(k: u32, img: u32, y: u32, x: u32, valid: bool) -> f32 {
  let ci = k / KK;
  let r = k - ci * KK;
  let ky = r / KS;
  let kx = r - ky * KS;
  let iy = i32(y + ky) - i32(p.pad);
  let ix = i32(x + kx) - i32(p.pad);
  if (!valid || ci >= p.ci || iy < 0 || ix < 0 || iy >= i32(p.h) || ix >= i32(p.w)) { return 0.0; }
  return ${load("in0[((img * p.ci + ci) * p.h + u32(iy)) * p.w + u32(ix)]")};
}`;
  return { decls, step: step.join("\n") };
}

function accDecl(t: ConvTile): string {
  const lines: string[] = [];
  for (const g of range(t.gm)) {
    for (const i of range(4)) {
      for (const h of range(t.gn)) lines.push(`  var acc_${g}_${i}_${h} = vec4<f32>(0.0);`);
    }
  }
  return lines.join("\n");
}

function indent(code: string, pad: string): string {
  return code.split("\n").map((l) => pad + l).join("\n");
}

/** Multiply-accumulate over the staged slice: BK unrolled steps. */
function sliceLoop(step: string): string {
  return `    for (var kk = 0u; kk < BK; kk++) {
      let base_a = kk * BM4 + lid.y;
      let base_b = kk * BN4 + lid.x;
${indent(step, "      ")}
    }`;
}

/** Private registers that carry the next K slice's loads across the multiply. */
function registerDecls(la: number, lb: number): string {
  return [...range(la).map((r) => `ra${r}`), ...range(lb).map((r) => `ra_b${r}`)]
    .map((v) => `  var ${v} = 0.0;`).join("\n");
}

/** Split-K: workgroup z reduces [kbeg, kend) of `total` when p.kchunk > 0 (else all of it). */
function splitRange(total: string, comment: string): string {
  return `  // ${comment}
  var kbeg = 0u;
  var kend = ${total};
  if (p.kchunk > 0u) {
    kbeg = wid.z * p.kchunk;
    kend = min(${total}, kbeg + p.kchunk);
  }`;
}

/**
 * The K loop over [kbeg, kend): stage the slice held in registers, load the next one into them,
 * multiply the staged slice.
 */
function kLoop(load: string, storeA: string, storeB: string, step: string): string {
  return `  var k0 = kbeg;
${load}
  for (; k0 < kend;) {
${storeA}
${storeB}
    workgroupBarrier();
    k0 += BK;
    if (k0 < kend) {
${load}
    }
${sliceLoop(step)}
    workgroupBarrier();
  }`;
}

/** The fused forward's epilogue inputs: bias [Co], residual [N, Co, H, W], flags. */
export function fusedDecls(resT: string, load: (e: string) => string): string {
  return `

struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@group(0) @binding(5) var<storage, read> res: array<${resT}>;
@group(0) @binding(6) var<uniform> fz: Fuse;

fn epi(o: u32, m: u32, v: f32) -> f32 {
  if (p.kchunk > 0u) { return v; }
  var r = v + bias[m];
  if (fz.res != 0u) { r += ${load("res[o]")}; }
  if (fz.relu != 0u) { r = max(r, 0.0); }
  return r;
}`;
}

/**
 * Forward kernel `forward`: in0 = X [N, Ci, H, W], in1 = W [Co, Ci, KS, KS], out = Y [N, Co, H, W]
 * (or split-K partials along workgroup z when p.kchunk > 0);
 * Y[co, col] = sum_k W[co, k] im2col(X)[k, col], col = (n, y, x), k = (ci, ky, kx). `fused` adds the
 * inference epilogue (bias, residual, ReLU: bindings 4-6) to unsplit runs. `batched` (1x1 only)
 * gives each image its own weight matrix (in1 = [N, Co, Ci]): the Winograd GEMMs, one per
 * transformed element, with H W padded to a multiple of the tile's columns. `storage` other than
 * f32 loads X, W (and the residual) as s16 and converts them to f32 on load (workgroup memory and
 * accumulation stay f32), and stores s16 outputs unless `out32` (split-K partials).
 */
export function convForwardSource(
  t: ConvTile,
  ks: number,
  fused = false,
  batched = false,
  storage: ConvStorage = "f32",
  out32 = false,
): string {
  checkTile(t);
  const half = storage !== "f32";
  if (half && batched) throw new Error("f16 storage has no batched (Winograd) GEMM");
  const ld = half ? (e: string) => `f32(${e})` : (e: string) => e;
  const outT = half && !out32 ? "s16" : "f32";
  const head = half ? f16Prelude(storage) + header("s16", outT) : HEADER;
  const st = outT === "s16" ? (e: string) => `s16(${e})` : (e: string) => e;
  const { bm, bn } = tileSize(t);
  const threads = t.wx * t.wy;
  const la = (bm * t.bk) / threads, lb = (bn * t.bk) / threads;
  const aStride = threads / t.bk, bStride = threads / bn;
  const { decls, step } = common(t, ks, head, ld);
  const loadA = range(la).map((r) =>
    `    { let m = m0 + t / BK + ${r * aStride}u; let k = k0 + t % BK;
      ra${r} = select(0.0, ${
      ld(`in1[${batched ? "wbase + " : ""}min(m, p.co - 1u) * kd + min(k, kd - 1u)]`)
    }, m < p.co && k < kend); }`
  ).join("\n");
  const loadB = range(lb).map((r) =>
    `    ra_b${r} = im2col(k0 + t / ${bn}u + ${
      r * bStride
    }u, bimg, by, bx, bvalid && k0 + t / ${bn}u + ${r * bStride}u < kend);`
  ).join("\n");
  const storeA = range(la).map((r) =>
    `    { let ml = t / BK + ${r * aStride}u; As[(t % BK) * BM4 + ml / 4u][ml % 4u] = ra${r}; }`
  ).join("\n");
  const storeB = range(lb).map((r) =>
    `    Bs[(t / ${bn}u + ${r * bStride}u) * BN4 + bcl / 4u][bcl % 4u] = ra_b${r};`
  ).join("\n");
  // Fused (inference): y = act(acc + bias[m] + res) unless split-K, whose sum kernel does it.
  const store = (o: string, v: string) =>
    fused
      ? `{ let o = ${o}; out[zoff + o] = ${st(`epi(o, m, ${v})`)}; }`
      : `out[zoff + ${o}] = ${st(v)};`;
  const epilogue: string[] = [];
  for (const h of range(t.gn)) {
    for (const j of range(4)) {
      epilogue.push(`  {
    let c = c0 + ${h * 4 * t.wx}u + lid.x * 4u + ${j}u;
    if (c < cols) {
      let img = c / hw;
      let px = c - img * hw;`);
      for (const g of range(t.gm)) {
        for (const i of range(4)) {
          epilogue.push(`      { let m = m0 + ${g * 4 * t.wy}u + lid.y * 4u + ${i}u;
        if (m < p.co) { ${store("(img * p.co + m) * hw + px", `acc_${g}_${i}_${h}[${j}]`)} } }`);
        }
      }
      epilogue.push(`    }\n  }`);
    }
  }
  return `${decls}${fused ? fusedDecls(half ? "s16" : "f32", ld) : ""}

@compute @workgroup_size(${t.wx}, ${t.wy})
fn forward(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * ${t.wx}u + lid.x;
  let hw = p.h * p.w;
  let cols = p.n * hw;
  let kd = p.ci * KK;
  let m0 = wid.y * ${bm}u;
  let c0 = wid.x * ${bn}u;
  // This thread always loads the same B column: decompose it once.
  let bcl = t % ${bn}u;
  let bc = c0 + bcl;
  let bvalid = bc < cols;
  let bimg = bc / hw;
  let bp = bc - bimg * hw;
  let by = bp / p.w;
  let bx = bp - by * p.w;
${
    splitRange(
      "kd",
      "Split-K (small batches): workgroup z sums k in [kbeg, kend) into its own copy of Y.",
    )
  }
  let zoff = wid.z * cols * p.co;${
    batched
      ? "\n  // Batched weights: image i of X multiplies weight i (H W is a multiple of BN).\n  let wbase = (c0 / hw) * p.co * kd;"
      : ""
  }
${accDecl(t)}
${registerDecls(la, lb)}
${kLoop(`${loadA}\n${loadB}`, storeA, storeB, step)}
${epilogue.join("\n")}
}
`;
}

/**
 * Weight-gradient kernel `wgrad`: in0 = X [N, Ci, H, W], in1 = dY [N, Co, H, W],
 * out = dW [Co, Ci, KS, KS] (or split-K partials along workgroup z when p.kchunk > 0);
 * dW[co, j] = sum_col dY[co, col] im2col(X)[j, col].
 */
export function convWgradSource(t: ConvTile, ks: number): string {
  checkTile(t);
  const { bm, bn } = tileSize(t);
  const threads = t.wx * t.wy;
  const la = (bm * t.bk) / threads, lb = (bn * t.bk) / threads;
  const stride = threads / t.bk;
  const { decls, step } = common(t, ks);
  // Each thread loads one reduction column (t % BK) of both tiles: its pixel is decomposed once per
  // slice; its rows of the B tile (kernel taps) are fixed and decomposed once.
  const jDecomp = range(lb).map((r) =>
    `  let tj${r} = j0 + t / BK + ${r * stride}u;
  let jci${r} = tj${r} / KK;
  let jr${r} = tj${r} - jci${r} * KK;
  let jy${r} = i32(jr${r} / KS) - i32(p.pad);
  let jx${r} = i32(jr${r} % KS) - i32(p.pad);`
  ).join("\n");
  const load = `    {
      let kc = k0 + t % BK;
      let valid = kc < kend;
      let img = kc / hw;
      let px = kc - img * hw;
      let y = px / p.w;
      let x = px - y * p.w;
${
    range(la).map((r) =>
      `      { let m = m0 + t / BK + ${r * stride}u;
        ra${r} = select(0.0, in1[min((img * p.co + m) * hw + px, last_dy)], valid && m < p.co); }`
    ).join("\n")
  }
${
    range(lb).map((r) =>
      `      { let iy = i32(y) + jy${r};
        let ix = i32(x) + jx${r};
        let ok = valid && tj${r} < kd && iy >= 0 && ix >= 0 && iy < i32(p.h) && ix < i32(p.w);
        let at = ((img * p.ci + jci${r}) * p.h + u32(max(iy, 0))) * p.w + u32(max(ix, 0));
        ra_b${r} = select(0.0, in0[min(at, last_x)], ok); }`
    ).join("\n")
  }
    }`;
  const storeA = range(la).map((r) =>
    `    { let rl = t / BK + ${r * stride}u; As[(t % BK) * BM4 + rl / 4u][rl % 4u] = ra${r}; }`
  ).join("\n");
  const storeB = range(lb).map((r) =>
    `    { let rl = t / BK + ${r * stride}u; Bs[(t % BK) * BN4 + rl / 4u][rl % 4u] = ra_b${r}; }`
  ).join("\n");
  const epilogue: string[] = [];
  for (const g of range(t.gm)) {
    for (const i of range(4)) {
      epilogue.push(`  {
    let m = m0 + ${g * 4 * t.wy}u + lid.y * 4u + ${i}u;
    if (m < p.co) {`);
      for (const h of range(t.gn)) {
        for (const j of range(4)) {
          epilogue.push(`      { let jj = j0 + ${h * 4 * t.wx}u + lid.x * 4u + ${j}u;
        if (jj < kd) { out[(wid.z * p.co + m) * kd + jj] = acc_${g}_${i}_${h}[${j}]; } }`);
        }
      }
      epilogue.push(`    }\n  }`);
    }
  }
  return `${decls}

@compute @workgroup_size(${t.wx}, ${t.wy})
fn wgrad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * ${t.wx}u + lid.x;
  let hw = p.h * p.w;
  let cols = p.n * hw;
  let kd = p.ci * KK;
  let m0 = wid.y * ${bm}u;
  let j0 = wid.x * ${bn}u;
  let last_dy = p.n * p.co * hw - 1u;
  let last_x = p.n * p.ci * hw - 1u;
${
    splitRange(
      "cols",
      "Split-K: workgroup z reduces columns [kbeg, kend) into its own slice of `out`.",
    )
  }
${jDecomp}
${accDecl(t)}
${registerDecls(la, lb)}
${kLoop(load, storeA, storeB, step)}
${epilogue.join("\n")}
}
`;
}

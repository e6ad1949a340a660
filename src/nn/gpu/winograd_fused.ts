// Fused Winograd F(m x m, 3x3) convolutions: one kernel per layer that keeps the transformed
// product M in the workgroup (no M buffer, no output-transform dispatch) and, in the "input fused"
// form, builds the transformed input V from the activation tensor in its tile load (no V buffer,
// no input-transform dispatch). A workgroup owns a block of BM output channels x BN tiles for all
// alpha = (m + 2)^2 transformed elements at once: its threads form alpha groups of RX x RY threads,
// group xi computing M[xi] (BM x BN) with GM x GN blocks of 4 x 4 per thread, staged K slices of BK
// input channels in workgroup memory (U [alpha][BK][BM] and V [alpha][BK][BN]). After the K loop
// the output transform Y = A^T M A runs in a rows of the alpha grid at a time (M of one row through
// workgroup memory, Y accumulated in registers: Y is linear in M), then bias, residual and ReLU.
import { f16Prelude } from "./conv_gemm.ts";
import {
  sandwich,
  winogradColumns,
  winogradGeometry,
  winogradMatrices,
  type WinogradTile,
} from "../winograd.ts";

/** Tiling of one fused Winograd kernel. */
export interface WinoFused {
  /** Threads of one transformed element's group along tiles (rx) and output channels (ry). */
  rx: number;
  ry: number;
  /** 4 x 4 register blocks per thread along output channels (gm) and tiles (gn). */
  gm: number;
  gn: number;
  /** Input channels per staged K slice. */
  bk: number;
  /** The input transform inside the tile load (true) or V read from the input-transform kernel. */
  input: boolean;
  /**
   * The in-load transform in two balanced stages through workgroup memory (B^T d by columns, then
   * by rows: BK BN (m + 2) jobs each) instead of one whole 6 x 6 patch per thread (BK BN jobs for
   * alpha BK BN / ... threads: most of them idle while a few transform).
   */
  split?: boolean;
  /**
   * The next K slice's global loads (U, and x or V) issued into registers before this slice's
   * products, stored to workgroup memory after them (split or V-buffer kernels only).
   */
  prefetch?: boolean;
}

/** Output channels (bm) and tiles (bn) of one workgroup. */
export function fusedBlock(f: WinoFused): { bm: number; bn: number } {
  return { bm: 4 * f.ry * f.gm, bn: 4 * f.rx * f.gn };
}

/** Threads of a fused kernel's workgroup for F(m x m). */
export function fusedThreads(f: WinoFused, m: WinogradTile): number {
  return (m + 2) * (m + 2) * f.rx * f.ry;
}

/** Workgroup memory (bytes) of a fused kernel: the K slices, or one alpha row of M if larger. */
export function fusedWorkgroupBytes(f: WinoFused, m: WinogradTile): number {
  const { bm, bn } = fusedBlock(f), a = m + 2;
  const split = f.split ? a * a * f.bk * bn : 0;
  return 4 * (Math.max(a * a * f.bk * (bm + bn), a * bm * bn) + split);
}

/** Throws unless the tiling fits WebGPU's 256 threads (and 128 columns for V-buffer reads). */
export function checkWinoFused(f: WinoFused, m: WinogradTile): void {
  const { bn } = fusedBlock(f);
  if (
    fusedThreads(f, m) > 256 || (!f.input && 128 % bn !== 0) || f.bk < 1 ||
    (f.split && !f.input) || (f.prefetch && f.input && !f.split)
  ) {
    throw new Error(`fused Winograd tiling ${JSON.stringify(f)} does not fit F(${m}x${m})`);
  }
}

/** A short name: f (input fused) or o (output only), BM x BN, slice depth, threads (F(4x4)). */
export function winoFusedName(f: WinoFused): string {
  const { bm, bn } = fusedBlock(f);
  return `fused-${f.input ? "io" : "o"}${bm}x${bn}k${f.bk}g${f.rx}x${f.ry}${f.split ? "s" : ""}${
    f.prefetch ? "p" : ""
  }`;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function lit(v: number): string {
  const s = String(v);
  return s.includes(".") || s.includes("e") ? s : `${s}.0`;
}

/** sum_k c[k] * term(k) as WGSL, zero coefficients dropped ("0.0" when none). */
function combo(c: number[], term: (k: number) => string): string {
  const t: string[] = [];
  c.forEach((v, k) => {
    if (v === 0) return;
    t.push(v === 1 ? term(k) : v === -1 ? `-${term(k)}` : `${lit(v)} * ${term(k)}`);
  });
  return t.length ? t.join(" + ").replaceAll("+ -", "- ") : "0.0";
}

/**
 * WGSL of the fused Winograd conv `fused` for F(m x m): binding 0 U [alpha, Co, Ci] f32, 1 the
 * activations x [N, Ci, H, W] (`act` storage; input fused) or V [alpha, Ci, ppad] f32 vec4s,
 * 2 bias [Co] f32, 3 res and 4 y [N, Co, H, W] (`act`), 5 Params. y = act(conv + bias + res).
 * Dispatch (ceil(Co / BM), ceil(P / BN), 1).
 */
export function winogradFusedSource(
  f: WinoFused,
  m: WinogradTile,
  act: "f32" | "f16" | "f16-emulated" = "f32",
): string {
  checkWinoFused(f, m);
  const { bt, at } = winogradMatrices(m);
  const a = m + 2, alpha = a * a, { bm, bn } = fusedBlock(f);
  const gsz = f.rx * f.ry, threads = alpha * gsz;
  const half = act !== "f32";
  const at_ = half ? "s16" : "f32";
  const ld = (e: string) => (half ? `f32(${e})` : e);
  const slots = Math.ceil((bm * bn) / threads);
  const bm4 = bm / 4, bn4 = bn / 4;
  const sb0 = alpha * f.bk * bm4;
  const sSize = Math.max(alpha * f.bk * (bm4 + bn4), a * bm * bn4);
  const step = (kk: string) => {
    const out: string[] = [];
    for (const g of range(f.gm)) {
      out.push(`let a${g} = S[(xi * BK + ${kk}) * BM4 + ${g * f.ry}u + ty];`);
    }
    for (const h of range(f.gn)) {
      out.push(`let b${h} = S[SB0 + (xi * BK + ${kk}) * BN4 + ${h * f.rx}u + tx];`);
    }
    for (const g of range(f.gm)) {
      for (const i of range(4)) {
        for (const h of range(f.gn)) {
          out.push(`acc_${g}_${i}_${h} = fma(vec4<f32>(a${g}[${i}]), b${h}, acc_${g}_${i}_${h});`);
        }
      }
    }
    return out;
  };
  const ind = (ls: string[], pad: string) => ls.map((l) => pad + l).join("\n");
  const patchAt = (k: string) =>
    `      let c = ${k} + kn / BN;
      let nl = kn % BN;
      let q = n0 + nl;
      var xb = 0u;
      var ok = c < p.ci && q < p.p;
      var y0 = 0i;
      var x0 = 0i;
      if (ok) {
        let img = q / p.tiles;
        let tt = q % p.tiles;
        let tyy = tt / p.tw;
        y0 = i32(tyy * ${m}u) - 1;
        x0 = i32((tt - tyy * p.tw) * ${m}u) - 1;
        xb = (img * p.ci + c) * p.h * p.w;
      }`;
  const patch = patchAt("k0");
  // Stage 1: column s of a patch, T[kn][i][s] = (B^T d)[i][s]; stage 2: row i, V[i][j] from T.
  const stage2 = `    for (var e = t; e < BK * BN * ${a}u; e += NT) {
      let i = e % ${a}u;
      let kn = e / ${a}u;
      let nl = kn % BN;
${ind(range(a).map((s) => `let r_${s} = T[(kn * ${a}u + i) * ${a}u + ${s}u];`), "      ")}
      let sv = SB0 + (i * ${a}u * BK + kn / BN) * BN4 + nl / 4u;
${
    ind(
      range(a).map((j) =>
        `S[sv + ${j * f.bk}u * BN4][nl % 4u] = ${combo(bt[j], (s) => `r_${s}`)};`
      ),
      "      ",
    )
  }
    }`;
  const splitLoad = `    for (var e = t; e < BK * BN * ${a}u; e += NT) {
      let s = e % ${a}u;
      let kn = e / ${a}u;
${patch}
${ind(range(a).map((r) => `let d_${r} = ldx(ok, xb, y0 + ${r}, x0 + i32(s));`), "      ")}
${
    ind(
      range(a).map((i) =>
        `T[(kn * ${a}u + ${i}u) * ${a}u + s] = ${combo(bt[i], (r) => `d_${r}`)};`
      ),
      "      ",
    )
  }
    }
    workgroupBarrier();
${stage2}`;
  // Prefetch: the next slice's loads in registers (lu U scalars, lj patch columns or lv V vec4s).
  const lu = Math.ceil((bm * f.bk) / gsz);
  const lj = Math.ceil((f.bk * bn * a) / threads);
  const lv = Math.ceil((f.bk * bn4) / gsz);
  const preRegs = [
    ...range(lu).map((l) => `  var ru${l} = 0.0;`),
    ...(f.input
      ? range(lj).flatMap((j) => range(a).map((r) => `  var rd${j}_${r} = 0.0;`))
      : range(lv).map((l) => `  var rv${l} = vec4<f32>(0.0);`)),
  ];
  const preLoad = (k: string) =>
    [
      ...range(lu).map((l) =>
        `    { let e = tg + ${l * gsz}u; let ml = e / BK; let mr = m0 + ml; let c = ${k} + e % BK;
      ru${l} = select(0.0, u[ubase + min(mr, p.co - 1u) * p.ci + min(c, p.ci - 1u)], e < BM * BK && mr < p.co && c < p.ci); }`
      ),
      ...(f.input
        ? range(lj).map((j) =>
          `    {
      let e = t + ${j * threads}u;
      if (e < BK * BN * ${a}u) {
      let s = e % ${a}u;
      let kn = e / ${a}u;
${patchAt(k)}
${ind(range(a).map((r) => `rd${j}_${r} = ldx(ok, xb, y0 + ${r}, x0 + i32(s));`), "      ")}
      }
    }`
        )
        : range(lv).map((l) =>
          `    { let e = tg + ${l * gsz}u; let c = ${k} + e / BN4;
      rv${l} = select(vec4<f32>(0.0), vin[xi * p.ci * p.ppad4 + min(c, p.ci - 1u) * p.ppad4 + n0 / 4u + e % BN4], e < BK * BN4 && c < p.ci); }`
        )),
    ].join("\n");
  const preStore = [
    ...range(lu).map((l) =>
      `    { let e = tg + ${
        l * gsz
      }u; if (e < BM * BK) { let ml = e / BK; S[(xi * BK + e % BK) * BM4 + ml / 4u][ml % 4u] = ru${l}; } }`
    ),
    ...(f.input
      ? [
        ...range(lj).map((j) =>
          `    {
      let e = t + ${j * threads}u;
      if (e < BK * BN * ${a}u) {
        let s = e % ${a}u;
        let kn = e / ${a}u;
${
            ind(
              range(a).map((i) =>
                `T[(kn * ${a}u + ${i}u) * ${a}u + s] = ${combo(bt[i], (r) => `rd${j}_${r}`)};`
              ),
              "        ",
            )
          }
      }
    }`
        ),
        "    workgroupBarrier();",
        stage2,
      ]
      : range(lv).map((l) =>
        `    { let e = tg + ${
          l * gsz
        }u; if (e < BK * BN4) { S[SB0 + (xi * BK + e / BN4) * BN4 + e % BN4] = rv${l}; } }`
      )),
  ].join("\n");
  const vLoad = f.split ? splitLoad : f.input
    ? `    for (var e = t; e < BK * BN; e += NT) {
      let c = k0 + e / BN;
      let nl = e % BN;
      let q = n0 + nl;
      var xb = 0u;
      var ok = c < p.ci && q < p.p;
      var y0 = 0i;
      var x0 = 0i;
      if (ok) {
        let img = q / p.tiles;
        let tt = q % p.tiles;
        let tyy = tt / p.tw;
        y0 = i32(tyy * ${m}u) - 1;
        x0 = i32((tt - tyy * p.tw) * ${m}u) - 1;
        xb = (img * p.ci + c) * p.h * p.w;
      }
${
      ind(
        range(a).flatMap((r) =>
          range(a).map((s) => `let d_${r}_${s} = ldx(ok, xb, y0 + ${r}, x0 + ${s});`)
        ),
        "      ",
      )
    }
${ind(sandwich(bt, bt, "d", "bd", "v"), "      ")}
      let sv = SB0 + (e / BN) * BN4 + nl / 4u;
${
      ind(
        range(alpha).map((xi) =>
          `S[sv + ${xi * f.bk}u * BN4][nl % 4u] = v_${Math.floor(xi / a)}_${xi % a};`
        ),
        "      ",
      )
    }
    }`
    : `    for (var e = tg; e < BK * BN4; e += GS) {
      let c = k0 + e / BN4;
      S[SB0 + (xi * BK + e / BN4) * BN4 + e % BN4] = select(vec4<f32>(0.0), vin[xi * p.ci * p.ppad4 + min(c, p.ci - 1u) * p.ppad4 + n0 / 4u + e % BN4], c < p.ci);
    }`;
  const prefetchLoop = `${preRegs.join("\n")}
${preLoad("0u")}
  for (var k0 = 0u; k0 < p.ci; k0 += BK) {
${preStore}
    workgroupBarrier();
    if (k0 + BK < p.ci) {
${preLoad("(k0 + BK)")}
    }
    for (var kk = 0u; kk < BK; kk++) {
${ind(step("kk"), "      ")}
    }
    workgroupBarrier();
  }`;
  const acc = range(f.gm).flatMap((g) =>
    range(4).flatMap((i) => range(f.gn).map((h) => `  var acc_${g}_${i}_${h} = vec4<f32>(0.0);`))
  );
  const yacc = range(slots).flatMap((sl) =>
    range(m).flatMap((r) => range(m).map((s) => `  var y_${sl}_${r}_${s} = 0.0;`))
  );
  // Output transform, one row ri of the alpha grid at a time: the groups of that row write their M
  // blocks (S [a][BM][BN4] vec4s), then each (channel, tile) pair's threads add A^T[., ri] z^T.
  const rows = range(a).map((ri) => {
    const writes = range(f.gm).flatMap((g) =>
      range(4).flatMap((i) =>
        range(f.gn).map((h) =>
          `S[((xi % ${a}u) * BM + ${g * 4 * f.ry}u + ty * 4u + ${i}u) * BN4 + ${
            h * f.rx
          }u + tx] = acc_${g}_${i}_${h};`
        )
      )
    );
    const adds = range(slots).map((sl) => {
      const lines = [
        `let pr = t + ${sl * threads}u;`,
        `let row = pr / BN;`,
        `let col = pr % BN;`,
        ...range(a).map((j) => `let q_${j} = S[(${j}u * BM + row) * BN4 + col / 4u][col % 4u];`),
        ...range(m).map((s) => `let z_${s} = ${combo(at[s], (j) => `q_${j}`)};`),
        ...range(m).flatMap((r) =>
          at[r][ri] === 0
            ? []
            : range(m).map((s) =>
              `y_${sl}_${r}_${s} += ${at[r][ri] === 1 ? `z_${s}` : `${lit(at[r][ri])} * z_${s}`};`
            )
        ),
      ];
      return `    if (t + ${sl * threads}u < BM * BN) {\n${ind(lines, "      ")}\n    }`;
    });
    return `  // alpha row ${ri}
  workgroupBarrier();
  if (xi / ${a}u == ${ri}u) {
${ind(writes, "    ")}
  }
  workgroupBarrier();
  {
${adds.join("\n")}
  }`;
  });
  const stores = range(slots).map((sl) =>
    `  {
    let pr = t + ${sl * threads}u;
    let co = m0 + pr / BN;
    let q = n0 + pr % BN;
    if (pr < BM * BN && co < p.co && q < p.p) {
      let img = q / p.tiles;
      let tt = q % p.tiles;
      let tyy = tt / p.tw;
      let oy = tyy * ${m}u;
      let ox = (tt - tyy * p.tw) * ${m}u;
      let yb = (img * p.co + co) * p.h * p.w;
      let bv = bias[co];
${
      ind(
        range(m).flatMap((r) =>
          range(m).map((s) => `st(yb, oy + ${r}u, ox + ${s}u, y_${sl}_${r}_${s}, bv);`)
        ),
        "      ",
      )
    }
    }
  }`
  );
  const src1 = f.input
    ? `@group(0) @binding(1) var<storage, read> x: array<${at_}>;`
    : `@group(0) @binding(1) var<storage, read> vin: array<vec4<f32>>;`;
  const ldx = f.input
    ? `
fn ldx(ok: bool, xb: u32, iy: i32, ix: i32) -> f32 {
  if (!ok || iy < 0 || ix < 0 || iy >= i32(p.h) || ix >= i32(p.w)) { return 0.0; }
  return ${ld("x[xb + u32(iy) * p.w + u32(ix)]")};
}
`
    : "";
  return `${half ? f16Prelude(act) : ""}// Generated by src/nn/gpu/winograd_fused.ts: ${
    winoFusedName(f)
  }, F(${m}x${m}, 3x3), activations ${act}.
struct Params { n: u32, ci: u32, co: u32, h: u32, w: u32, tw: u32, tiles: u32, p: u32, ppad4: u32, relu: u32, res: u32, _a: u32 }

@group(0) @binding(0) var<storage, read> u: array<f32>;
${src1}
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> res: array<${at_}>;
@group(0) @binding(4) var<storage, read_write> y: array<${at_}>;
@group(0) @binding(5) var<uniform> p: Params;

const BK = ${f.bk}u;
const BM = ${bm}u;
const BN = ${bn}u;
const BM4 = ${bm4}u;
const BN4 = ${bn4}u;
const SB0 = ${sb0}u;
const GS = ${gsz}u;
const NT = ${threads}u;
var<workgroup> S: array<vec4<f32>, ${sSize}>;${
    f.split
      ? `
var<workgroup> T: array<f32, ${alpha * f.bk * bn}>;`
      : ""
  }
${ldx}
fn st(yb: u32, oy: u32, ox: u32, v: f32, bv: f32) {
  if (oy >= p.h || ox >= p.w) { return; }
  let at = yb + oy * p.w + ox;
  var r = v + bv;
  if (p.res != 0u) { r += ${ld("res[at]")}; }
  if (p.relu != 0u) { r = max(r, 0.0); }
  y[at] = ${half ? "s16(r)" : "r"};
}

@compute @workgroup_size(${threads})
fn fused(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let xi = t / GS;
  let tg = t % GS;
  let tx = tg % ${f.rx}u;
  let ty = tg / ${f.rx}u;
  let m0 = wid.x * BM;
  let n0 = wid.y * BN;
  let ubase = xi * p.co * p.ci;
${acc.join("\n")}
${yacc.join("\n")}
${
    f.prefetch ? prefetchLoop : `  for (var k0 = 0u; k0 < p.ci; k0 += BK) {
    for (var e = tg; e < BM * BK; e += GS) {
      let ml = e / BK;
      let mr = m0 + ml;
      let c = k0 + e % BK;
      S[(xi * BK + e % BK) * BM4 + ml / 4u][ml % 4u] = select(0.0, u[ubase + min(mr, p.co - 1u) * p.ci + min(c, p.ci - 1u)], mr < p.co && c < p.ci);
    }
${vLoad}
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
${ind(step("kk"), "      ")}
    }
    workgroupBarrier();
  }`
  }
${rows.join("\n")}
${stores.join("\n")}
}
`;
}

/** Workgroups of a fused kernel's dispatch: (Co blocks, tile blocks, 1). */
export function fusedGroups(
  f: WinoFused,
  m: WinogradTile,
  n: number,
  co: number,
  h: number,
  w: number,
): [number, number, number] {
  const { bm, bn } = fusedBlock(f), { p } = winogradGeometry(m, n, h, w);
  return [Math.ceil(co / bm), Math.ceil(p / bn), 1];
}

/** Bytes one Winograd layer moves, by kernel, for the bench's static traffic model. */
export interface WinoTraffic {
  path: string;
  /** Each tensor read or written once per kernel that touches it (an ideal cache). */
  dramBytes: number;
  /** Reads as the tiles issue them (operands re-read once per row / column block; L2 traffic). */
  tileBytes: number;
  dispatches: number;
}

/**
 * The static traffic model of one 3x3 layer (batch n, ci -> co, h x w, F(m x m)), activations of
 * `actBytes` bytes, for: the direct implicit GEMM (128 x 128 tiles), the unfused Winograd pipeline
 * (input transform, GEMM with `gemmBlock` tiles, output transform), the fused-output kernel (V
 * buffer, no M) and the fully fused kernel (no V, no M) with `fusedBlk` tiles.
 */
export function winogradTraffic(
  m: WinogradTile,
  s: { n: number; ci: number; co: number; h: number; w: number },
  actBytes = 4,
  gemmBlk = { bm: 128, bn: 128 },
  fusedBlk = { bm: 16, bn: 16 },
): WinoTraffic[] {
  const { alpha, p } = winogradGeometry(m, s.n, s.h, s.w), ppad = winogradColumns(p);
  // The unfused GEMM's columns: P rounded up to its block width (variantColumns).
  const gpad = Math.ceil(p / gemmBlk.bn) * gemmBlk.bn;
  const xb = s.n * s.ci * s.h * s.w * actBytes, yb = s.n * s.co * s.h * s.w * actBytes;
  const ub = alpha * s.co * s.ci * 4, vb = alpha * s.ci * ppad * 4;
  const vg = alpha * s.ci * gpad * 4, mg = alpha * s.co * gpad * 4;
  const unfused = unfusedWinogradBytes(alpha, p, s, actBytes, gemmBlk.bn);
  const wb = s.co * s.ci * 9 * actBytes;
  // Epilogue: y written, the residual read (the network's residual layers; an upper bound).
  const epi = 2 * yb;
  const cols = s.n * s.h * s.w;
  const dRows = Math.ceil(s.co / 128), dCols = Math.ceil(cols / 128);
  // Direct: x patches re-read per row block (3 x 3 overlap hits cache), w per column block.
  const direct = { dram: xb + wb + epi, tile: xb * dRows + wb * dCols + epi };
  const gRows = Math.ceil(s.co / gemmBlk.bm), gCols = gpad / gemmBlk.bn;
  const halo = ((m + 2) * (m + 2)) / (m * m);
  const fRows = Math.ceil(s.co / fusedBlk.bm), fCols = Math.ceil(p / fusedBlk.bn);
  return [
    { path: "direct implicit GEMM", dramBytes: direct.dram, tileBytes: direct.tile, dispatches: 1 },
    {
      path: `Winograd F(${m}) unfused (transform, GEMM, transform)`,
      dramBytes: unfused,
      tileBytes: xb * halo + vg + (ub * gCols + vg * gRows + mg) + (mg + epi),
      dispatches: 3,
    },
    {
      path: `Winograd F(${m}) fused output (V buffer, no M)`,
      dramBytes: xb + vb + ub + vb + epi,
      tileBytes: xb * halo + vb + ub * fCols + vb * fRows + epi,
      dispatches: 2,
    },
    {
      path: `Winograd F(${m}) fused input + output (no V, no M)`,
      dramBytes: xb + ub + epi,
      tileBytes: xb * halo * fRows + ub * fCols + epi,
      dispatches: 1,
    },
  ];
}

/**
 * DRAM bytes of an unfused Winograd layer (input transform, GEMM, output transform; each tensor
 * read or written once per kernel that touches it, f32 V and M) with `alpha` GEMM slices of `p`
 * tile columns padded to the GEMM's block width `bn`: winogradTraffic's unfused row, and the mixed
 * tiles' (289 slices of 4 columns an image on 26 x 26).
 */
export function unfusedWinogradBytes(
  alpha: number,
  p: number,
  s: { n: number; ci: number; co: number; h: number; w: number },
  actBytes = 4,
  bn = 128,
): number {
  const gpad = Math.ceil(p / bn) * bn;
  const xb = s.n * s.ci * s.h * s.w * actBytes, yb = s.n * s.co * s.h * s.w * actBytes;
  const ub = alpha * s.co * s.ci * 4;
  const vg = alpha * s.ci * gpad * 4, mg = alpha * s.co * gpad * 4;
  // Input transform: x read, V written; GEMM: U, V read, M written; output transform: M read, y
  // written and the residual read (the network's residual layers; an upper bound).
  return xb + vg + (ub + vg + mg) + (mg + 2 * yb);
}

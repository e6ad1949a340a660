// The autotuner's results on disk, so that a process does not re-time every kernel candidate its
// predecessors on the same adapter already timed (seconds per layer shape and batch size on a
// hardware GPU, and the AlphaZero loop records plans for six padded batch sizes).
// One JSON file: results keyed by the tuner's own key (adapter, storage, tiles, shape, candidates)
// and a fingerprint of the WGSL the tuners compile, so a change to any kernel retunes.
import { writeFileAtomic } from "../../cli/atomic.ts";
import { envValue } from "../../env.ts";
import { winogradSource } from "../winograd.ts";
import { wgradTileOf } from "./backend.ts";
import { f16Entries } from "./f16.ts";
import { HARDWARE_TILES, kernelSources, type KernelTiles } from "./kernels.ts";
import { winogradBridgeSource } from "./winograd_bridge.ts";
import { winogradFusedSource } from "./winograd_fused.ts";
import { winogradInputStagedSource, winogradOutputStagedSource } from "./winograd_staged.ts";
import {
  fusedCandidates,
  hardwareCandidates,
  splitCandidates,
  WGRAD_VARIANTS,
  wgradVariantSource,
  winogradGemmSource,
  winogradWgradSource,
} from "./winograd_gemm.ts";

/** The file's format; a file of another format is ignored (and replaced on the next write). */
const FORMAT = 1;
/** Entries kept at most (the oldest go first): each is a few KB. */
const MAX_ENTRIES = 2000;

/** One stored result: what the tuner returned, when, under which kernel fingerprint. */
interface Entry<T> {
  fingerprint: string;
  savedAt: string;
  result: T;
}

interface CacheFile<T> {
  format: number;
  entries: Record<string, Entry<T>>;
}

/**
 * The tuning cache's file: KIBITZ_TUNE_CACHE (a path; `off` or `0` turns the cache off), else
 * `$XDG_CACHE_HOME/kibitz/gpu-tuning.json` or `~/.cache/kibitz/gpu-tuning.json`; null where there
 * is no such place (a browser, no home directory) or the cache is off.
 */
export function tuneCachePath(): string | null {
  if (!cacheEnabled) return null;
  const set = envValue("KIBITZ_TUNE_CACHE");
  if (set !== undefined && set !== "") return set === "off" || set === "0" ? null : set;
  const base = envValue("XDG_CACHE_HOME") || (envValue("HOME") ? `${envValue("HOME")}/.cache` : "");
  return base ? `${base}/kibitz/gpu-tuning.json` : null;
}

let cacheEnabled = true;

/**
 * Turns the disk cache off (or back on) for this process: the `bench nn` suite times the tuner
 * itself, so it must not read results from an earlier run.
 */
export function setTuneCacheEnabled(on: boolean): void {
  cacheEnabled = on;
}

let fingerprint: Promise<string> | null = null;

/**
 * Bumped when the way plans record the tuned kernels changes what the tuners time without any
 * WGSL changing (session 25: Winograd variants pad their tile columns to their own block width).
 */
const RECORDING_VERSION = "2";

/**
 * SHA-256 (hex, first 16 bytes) of every WGSL source the tuners time: the network kernels for the
 * hardware tiles, their f16 twins, the Winograd transforms, every GEMM and fused candidate, and the
 * weight-gradient GEMMs, and RECORDING_VERSION. Any kernel edit changes it, and with it every
 * cache key.
 */
export function kernelFingerprint(tiles: KernelTiles = HARDWARE_TILES): Promise<string> {
  if (fingerprint && tiles === HARDWARE_TILES) return fingerprint;
  const p = (async () => {
    const parts: string[] = [`recording ${RECORDING_VERSION}`, ...kernelSources(tiles)];
    // Every combination a plan can compile; the ones a generator refuses are left out.
    const add = (f: () => string) => {
      try {
        parts.push(f());
      } catch { /* not a valid combination */ }
    };
    const storages = ["f32", "f16", "f16-emulated"] as const;
    for (const st of ["f16", "f16-emulated"] as const) {
      for (const [src] of Object.values(f16Entries(tiles, st))) parts.push(src);
    }
    for (const m of [2, 4, 6, 7] as const) {
      for (const act of storages) {
        for (const tr of storages) add(() => winogradSource(m, act, tr, false, true));
      }
      // The split-K candidates' readers of M (one text per tile covers the generator's path).
      add(() => winogradSource(m, "f32", "f32", false, true, 2));
      // The bridges (the chained-conv timings): one text per tile covers their generator, and one
      // adding split-K partials.
      for (const [keepY, splits] of [[false, 1], [true, 1], [false, 2]] as const) {
        for (const staged of [false, true]) {
          add(() =>
            winogradBridgeSource({
              m,
              act: "f32",
              mIn: "f32",
              vOut: "f32",
              h: 26,
              w: 26,
              keepY,
              ...(splits > 1 ? { splits } : {}),
              ...(staged ? { staged } : {}),
            })
          );
        }
      }
    }
    for (const m of [2, 4, 6, 7] as const) {
      // The column-staged transforms (`-c`, `-i`, `-ic` candidates).
      for (const act of storages) {
        for (const tr of storages) {
          add(() => winogradOutputStagedSource(m, act, tr, false, 1, 256));
          add(() => winogradInputStagedSource(m, act, tr, false, 256));
        }
      }
    }
    // The candidates' names: a twin that shares its GEMM's text (`-o`, `-c`) is a new candidate.
    const cands = [...hardwareCandidates(true), ...splitCandidates()];
    parts.push(cands.map((c) => c.name).join(" "));
    for (const c of cands) {
      for (const tr of storages) add(() => winogradGemmSource(c.gemm, tr));
    }
    for (const c of fusedCandidates()) {
      for (const act of storages) add(() => winogradFusedSource(c.fused, 4, act));
    }
    for (const [co, ci] of [[256, 256], [32, 32]]) {
      const t = wgradTileOf(tiles, co, ci);
      parts.push(winogradWgradSource(t, false));
      for (const v of WGRAD_VARIANTS) add(() => wgradVariantSource(t, v).src);
    }
    const bytes = new TextEncoder().encode(parts.join("\u0000"));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return [...digest.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  })();
  if (tiles === HARDWARE_TILES) fingerprint = p;
  return p;
}

/** Reads the cache file; a missing, unreadable or foreign file is an empty cache. */
async function readCache<T>(path: string): Promise<CacheFile<T>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return { format: FORMAT, entries: {} };
  }
  try {
    const f = JSON.parse(text) as CacheFile<T>;
    if (f && f.format === FORMAT && f.entries && typeof f.entries === "object") return f;
  } catch { /* corrupt: start over */ }
  warnOnce(
    `read ${path}`,
    `kibitz: ignoring the unreadable GPU tuning cache ${path} (it will be rewritten)`,
  );
  return { format: FORMAT, entries: {} };
}

const warned = new Set<string>();
/** One warning per file and kind of trouble in a process (a batch of plans writes many entries). */
function warnOnce(key: string, text: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  console.error(text);
}

/** The stored result under `key` for the current kernels, or null. */
export async function loadTuned<T>(key: string): Promise<T | null> {
  const path = tuneCachePath();
  if (!path) return null;
  const [f, fp] = await Promise.all([readCache<T>(path), kernelFingerprint()]);
  const e = f.entries[key];
  return e && e.fingerprint === fp ? e.result : null;
}

/**
 * Stores `result` under `key`: the file is read again and merged (another process may have added
 * entries meanwhile), then replaced atomically. A failure to write only warns: tuning results are
 * a cache.
 */
export function saveTuned<T>(key: string, result: T): Promise<void> {
  // One write at a time in this process, so that none of its entries is lost to a merge race.
  saving = saving.then(() => writeEntry(key, result));
  return saving;
}
let saving: Promise<void> = Promise.resolve();

async function writeEntry<T>(key: string, result: T): Promise<void> {
  const path = tuneCachePath();
  if (!path) return;
  try {
    const fp = await kernelFingerprint();
    const f = await readCache<T>(path);
    f.entries[key] = { fingerprint: fp, savedAt: new Date().toISOString(), result };
    const keys = Object.keys(f.entries);
    if (keys.length > MAX_ENTRIES) {
      keys.sort((a, b) => f.entries[a].savedAt.localeCompare(f.entries[b].savedAt));
      for (const k of keys.slice(0, keys.length - MAX_ENTRIES)) delete f.entries[k];
    }
    const dir = path.slice(0, Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")));
    if (dir) await Deno.mkdir(dir, { recursive: true });
    await writeFileAtomic(path, JSON.stringify(f));
  } catch (e) {
    warnOnce(
      `write ${path}`,
      `kibitz: could not write the GPU tuning cache ${path}: ${(e as Error).message}`,
    );
  }
}

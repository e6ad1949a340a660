import { crc32 } from "../crc32.ts";
import { type ErrorCode, KibitzError } from "../errors.ts";
import { writeFileAtomic } from "../cli/atomic.ts";
import { type NetConfig, sameCells, validateConfig } from "./config.ts";
import { type NetWeights, paramSpecs } from "./params.ts";
import { type CpuTensor, cpuTensor, numel, sameShape, shapeString } from "./tensor.ts";

/**
 * Checkpoint layout (little endian):
 *   "KBNN" | u32 version | u32 header bytes | header JSON (padded to 4) | f32 tensors in header
 *   order | f32 momentum buffers named in `velocity` (optional) | u32 CRC-32 of everything before.
 * The header holds the model config, each tensor's name and shape, free-form metadata, and the
 * names of the trainable tensors whose SGD momentum follows (so training resumes exactly).
 */
export const CHECKPOINT_VERSION = 1;
const MAGIC = 0x4e4e424b; // "KBNN"

interface Header {
  config: NetConfig;
  tensors: { name: string; shape: number[] }[];
  meta: Record<string, string | number>;
  velocity?: string[];
}

/** What a checkpoint holds: weights, metadata, and SGD momentum when it was saved. */
export interface Checkpoint {
  weights: NetWeights;
  meta: Record<string, string | number>;
  velocity: Map<string, Float32Array> | null;
}

/** Serializes weights, metadata (such as the training step) and optional momentum buffers. */
export function encodeCheckpoint(
  w: NetWeights,
  meta: Record<string, string | number> = {},
  velocity: Map<string, Float32Array> | null = null,
): Uint8Array {
  const vnames = velocity
    ? w.specs.filter((s) => s.trainable && velocity.has(s.name)).map((s) => s.name)
    : [];
  const header: Header = {
    config: w.config,
    tensors: w.specs.map((s) => ({ name: s.name, shape: s.shape })),
    meta,
    ...(velocity ? { velocity: vnames } : {}),
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const hlen = Math.ceil(json.length / 4) * 4;
  const size = (name: string) => numel(w.specs.find((s) => s.name === name)!.shape);
  const values = w.specs.reduce((a, s) => a + numel(s.shape), 0) +
    vnames.reduce((a, n) => a + size(n), 0);
  const bytes = new Uint8Array(12 + hlen + values * 4 + 4);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, CHECKPOINT_VERSION, true);
  view.setUint32(8, hlen, true);
  bytes.fill(0x20, 12, 12 + hlen);
  bytes.set(json, 12);
  let off = 12 + hlen;
  for (const s of w.specs) {
    const t = w.tensors.get(s.name);
    if (!t || !sameShape(t.shape, s.shape)) {
      throw new KibitzError(
        "shape_mismatch",
        `cannot save tensor ${s.name}: missing or wrong shape`,
      );
    }
    for (let i = 0; i < t.data.length; i++, off += 4) view.setFloat32(off, t.data[i], true);
  }
  for (const n of vnames) {
    const v = velocity!.get(n)!;
    if (v.length !== size(n)) {
      throw new KibitzError("shape_mismatch", `velocity ${n} has ${v.length} values`);
    }
    for (let i = 0; i < v.length; i++, off += 4) view.setFloat32(off, v[i], true);
  }
  view.setUint32(off, crc32(bytes.subarray(0, off)), true);
  return bytes;
}

/**
 * Parses checkpoint bytes. `where` names the source in errors; `expect` (optional) is the config
 * the caller needs, and any difference is a shape mismatch naming the first tensor that differs.
 */
export function decodeCheckpoint(
  bytes: Uint8Array,
  where = "checkpoint",
  expect?: NetConfig,
): Checkpoint {
  const fail = (code: ErrorCode, msg: string): never => {
    throw new KibitzError(code, `${where}: ${msg}`);
  };
  if (bytes.length < 16) fail("checkpoint_truncated", `file is truncated (${bytes.length} bytes)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) {
    fail("bad_checkpoint", "not a Kibitz network checkpoint (bad magic)");
  }
  const version = view.getUint32(4, true);
  if (version !== CHECKPOINT_VERSION) {
    fail(
      "checkpoint_version",
      `format version ${version}, this build reads version ${CHECKPOINT_VERSION}`,
    );
  }
  const hlen = view.getUint32(8, true);
  if (12 + hlen + 4 > bytes.length) {
    fail("checkpoint_truncated", "file is truncated inside the header");
  }
  let header: Header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + hlen)));
  } catch {
    return fail("bad_checkpoint", "header is not valid JSON");
  }
  // The header is untrusted: check its shape before using it (a valid CRC proves nothing here).
  const h = header as unknown as Record<string, unknown>;
  const isShape = (x: unknown) =>
    Array.isArray(x) && x.every((d) => Number.isSafeInteger(d) && d >= 0 && d < 2 ** 31);
  if (
    typeof h !== "object" || h === null || !Array.isArray(h.tensors) ||
    typeof h.config !== "object" || h.config === null ||
    !h.tensors.every((t: { name?: unknown; shape?: unknown }) =>
      typeof t === "object" && t !== null && typeof t.name === "string" && isShape(t.shape)
    ) ||
    (h.velocity !== undefined &&
      (!Array.isArray(h.velocity) || !h.velocity.every((n) => typeof n === "string"))) ||
    (h.meta !== undefined && (typeof h.meta !== "object" || h.meta === null))
  ) {
    fail("bad_checkpoint", "header does not describe tensors (name and shape of each)");
  }
  const shapeOf = new Map(header.tensors.map((t) => [t.name, t.shape]));
  const vnames = header.velocity ?? [];
  for (const n of vnames) {
    if (!shapeOf.has(n)) fail("bad_checkpoint", `velocity for unknown tensor ${n}`);
  }
  const values = header.tensors.reduce((a, t) => a + numel(t.shape), 0) +
    vnames.reduce((a, n) => a + numel(shapeOf.get(n)!), 0);
  const end = 12 + hlen + values * 4;
  if (bytes.length < end + 4) {
    fail(
      "checkpoint_truncated",
      `file is truncated: ${bytes.length} bytes, header promises ${end + 4}`,
    );
  }
  if (bytes.length > end + 4) {
    fail("bad_checkpoint", `${bytes.length - end - 4} unexpected trailing bytes`);
  }
  const stored = view.getUint32(end, true), actual = crc32(bytes.subarray(0, end));
  if (stored !== actual) {
    fail(
      "checkpoint_checksum",
      `checksum mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)})`,
    );
  }
  let config: NetConfig;
  try {
    config = validateConfig(header.config);
  } catch (e) {
    return fail("bad_checkpoint", (e as Error).message);
  }
  // Every block holds tensors: a config with more blocks than the file has tensors is a lie,
  // and listing its specs would not end (a hostile `blocks: 1e12`).
  if (config.blocks > header.tensors.length) {
    fail(
      "shape_mismatch",
      `config has ${config.blocks} blocks, the file ${header.tensors.length} tensors`,
    );
  }
  // The value head's kind first: its tensors' shapes differ too, and "value.conv 32x16x1x1" says
  // less than "pooled (32 channels)".
  if (expect && config.valuePool !== expect.valuePool) {
    const show = (v: number | undefined) => v ? `pooled (${v} channels)` : "board-wide";
    fail(
      "shape_mismatch",
      `model value head is ${show(config.valuePool)}, the model needs ${show(expect.valuePool)}`,
    );
  }
  const specs = paramSpecs(config);
  const want = expect ? paramSpecs(expect) : specs;
  if (want.length !== header.tensors.length) {
    fail("shape_mismatch", `${header.tensors.length} tensors, the model needs ${want.length}`);
  }
  want.forEach((s, i) => {
    const t = header.tensors[i];
    if (t.name !== s.name || !sameShape(t.shape, s.shape)) {
      fail(
        "shape_mismatch",
        `tensor ${i} is ${t.name} ${shapeString(t.shape)}, the model needs ${s.name} ${
          shapeString(s.shape)
        }`,
      );
    }
  });
  if (expect) {
    // The tensors are read with the header's config: it must be the one the caller needs.
    for (const k of Object.keys(expect) as (keyof NetConfig)[]) {
      if (k !== "cells" && k !== "valuePool" && config[k] !== expect[k]) {
        fail("shape_mismatch", `model config ${k} is ${config[k]}, the model needs ${expect[k]}`);
      }
    }
    if (!sameCells(config.cells, expect.cells)) {
      const show = (c: NetConfig["cells"]) => c ? JSON.stringify(c) : "the fully connected head";
      fail(
        "shape_mismatch",
        `model policy head is ${show(config.cells)}, the model needs ${show(expect.cells)}`,
      );
    }
  }
  const tensors = new Map<string, CpuTensor>();
  let off = 12 + hlen;
  for (const s of specs) {
    const n = numel(s.shape);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++, off += 4) data[i] = view.getFloat32(off, true);
    tensors.set(s.name, cpuTensor(s.shape, data));
  }
  let velocity: Map<string, Float32Array> | null = null;
  if (header.velocity) {
    velocity = new Map();
    for (const n of vnames) {
      const data = new Float32Array(numel(shapeOf.get(n)!));
      for (let i = 0; i < data.length; i++, off += 4) data[i] = view.getFloat32(off, true);
      velocity.set(n, data);
    }
  }
  return { weights: { config, specs, tensors }, meta: header.meta ?? {}, velocity };
}

/** Writes a checkpoint atomically (temp file, then rename). */
export async function saveCheckpoint(
  path: string,
  w: NetWeights,
  meta: Record<string, string | number> = {},
  velocity: Map<string, Float32Array> | null = null,
): Promise<void> {
  await writeFileAtomic(path, encodeCheckpoint(w, meta, velocity));
}

/** Reads a checkpoint file; a missing file is a clear `not_found` error. */
export async function loadCheckpoint(
  path: string,
  expect?: NetConfig,
): Promise<Checkpoint> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new KibitzError("not_found", `checkpoint ${path}: no such file`);
    }
    throw e;
  }
  return decodeCheckpoint(bytes, path, expect);
}
export { crc32 };

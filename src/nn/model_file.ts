// A compact file for shipping a Hive network: large weight tensors stored as int8 with one f32
// scale per output row (symmetric, max-abs), small ones and batch-norm statistics as f32, the whole
// gzip-compressed. The policy head's fully connected layer alone is 5,489 x 1,352 weights (30 MB as
// f32), so this is what lets a trained network live in the repository under 8 MB.
//   gzip( "KBHQ" | u32 version | u32 header bytes | header JSON (padded to 4) | tensors )
// Each tensor in header order: f32 values, or (rows f32 scales, then rows x cols int8, padded to 4).
import { gunzipSync, gzipSync } from "fflate";
import { KibitzError } from "../errors.ts";
import { decodeCheckpoint } from "./checkpoint.ts";
import { type NetConfig, validateConfig } from "./config.ts";
import { type NetWeights, paramSpecs } from "./params.ts";
import { type CpuTensor, cpuTensor, numel } from "./tensor.ts";

const MAGIC = 0x5148424b; // "KBHQ"
const VERSION = 1;
/** Tensors with at least this many values are stored as int8 rows. */
const QUANT_MIN = 4096;

interface Header {
  config: NetConfig;
  meta: Record<string, string | number>;
  tensors: { name: string; shape: number[]; int8: boolean }[];
}

/** A loaded model: weights and the metadata saved with them (name, how it was trained). */
export interface HiveModel {
  weights: NetWeights;
  meta: Record<string, string | number>;
}

/** Encodes weights as a compact model file (int8 rows for large tensors, gzip). */
export function encodeHiveModel(w: NetWeights, meta: Record<string, string | number>): Uint8Array {
  const header: Header = {
    config: w.config,
    meta,
    tensors: w.specs.map((s) => ({
      name: s.name,
      shape: s.shape,
      int8: s.trainable && numel(s.shape) >= QUANT_MIN,
    })),
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const hlen = Math.ceil(json.length / 4) * 4;
  let size = 12 + hlen;
  for (const t of header.tensors) {
    const n = numel(t.shape), rows = t.shape[0];
    size += t.int8 ? rows * 4 + Math.ceil(n / 4) * 4 : n * 4;
  }
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, VERSION, true);
  view.setUint32(8, hlen, true);
  bytes.fill(0x20, 12, 12 + hlen);
  bytes.set(json, 12);
  let off = 12 + hlen;
  for (const t of header.tensors) {
    const data = w.tensors.get(t.name)!.data;
    if (!t.int8) {
      for (let i = 0; i < data.length; i++, off += 4) view.setFloat32(off, data[i], true);
      continue;
    }
    const rows = t.shape[0], cols = data.length / rows;
    const scales = new Float32Array(rows);
    for (let r = 0; r < rows; r++) {
      let m = 0;
      for (let c = 0; c < cols; c++) m = Math.max(m, Math.abs(data[r * cols + c]));
      scales[r] = m / 127;
      view.setFloat32(off + r * 4, scales[r], true);
    }
    off += rows * 4;
    for (let r = 0; r < rows; r++) {
      const inv = scales[r] > 0 ? 1 / scales[r] : 0;
      for (let c = 0; c < cols; c++) view.setInt8(off++, Math.round(data[r * cols + c] * inv));
    }
    off = Math.ceil(off / 4) * 4;
  }
  return gzipSync(bytes, { level: 6 });
}

/** Decodes a model file, or a plain network checkpoint (`.kbnn`), into weights and metadata. */
export function decodeHiveModel(file: Uint8Array, where = "model"): HiveModel {
  const kbnn = file.length >= 4 && new DataView(file.buffer, file.byteOffset).getUint32(0, true) ===
      0x4e4e424b;
  if (kbnn) {
    const c = decodeCheckpoint(file, where);
    return { weights: c.weights, meta: c.meta };
  }
  let bytes: Uint8Array;
  try {
    bytes = gunzipSync(file);
  } catch {
    throw new KibitzError("bad_model", `${where}: neither a network checkpoint nor a model file`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || view.getUint32(0, true) !== MAGIC) {
    throw new KibitzError("bad_model", `${where}: not a Kibitz Hive model (bad magic)`);
  }
  if (view.getUint32(4, true) !== VERSION) {
    throw new KibitzError("bad_model", `${where}: model version ${view.getUint32(4, true)}`);
  }
  const hlen = view.getUint32(8, true);
  const header: Header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + hlen)));
  const config = validateConfig(header.config);
  const specs = paramSpecs(config);
  const tensors = new Map<string, CpuTensor>();
  let off = 12 + hlen;
  specs.forEach((s, i) => {
    const t = header.tensors[i];
    if (!t || t.name !== s.name || numel(t.shape) !== numel(s.shape)) {
      throw new KibitzError("bad_model", `${where}: tensor ${i} does not match the model`);
    }
    const n = numel(s.shape), data = new Float32Array(n);
    if (off + (t.int8 ? s.shape[0] * 4 + n : n * 4) > bytes.length) {
      throw new KibitzError("bad_model", `${where}: file is truncated at ${s.name}`);
    }
    if (!t.int8) {
      for (let k = 0; k < n; k++, off += 4) data[k] = view.getFloat32(off, true);
    } else {
      const rows = s.shape[0], cols = n / rows;
      const q = new Int8Array(bytes.buffer, bytes.byteOffset + off + rows * 4, n);
      for (let r = 0; r < rows; r++) {
        const sc = view.getFloat32(off + r * 4, true);
        for (let c = 0; c < cols; c++) data[r * cols + c] = q[r * cols + c] * sc;
      }
      off = Math.ceil((off + rows * 4 + n) / 4) * 4;
    }
    tensors.set(s.name, cpuTensor(s.shape, data));
  });
  return { weights: { config, specs, tensors }, meta: header.meta ?? {} };
}

/** Reads a model file or checkpoint from disk. */
export async function loadHiveModel(path: string): Promise<HiveModel> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new KibitzError("not_found", `model ${path}: no such file`);
    }
    throw e;
  }
  return decodeHiveModel(bytes, path);
}

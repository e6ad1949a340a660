import { KibitzError } from "../errors.ts";
import { envValue } from "../env.ts";

/** What we know about the adapter we got, for reports and benchmarks. */
export interface AdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for software/fallback adapters (llvmpipe, SwiftShader, WARP). */
  isFallback: boolean;
  features: string[];
  limits: Record<string, number>;
}

/** An acquired adapter and device plus per-device caches. */
export interface GpuContext {
  adapter: GPUAdapter;
  device: GPUDevice;
  report: AdapterReport;
  /** Whether `timestamp-query` was enabled on the device. */
  timestamps: boolean;
  /** Shader modules keyed by WGSL source. */
  modules: Map<string, GPUShaderModule>;
  /** Compute pipelines keyed by source + entry point + constants. */
  pipelines: Map<string, GPUComputePipeline>;
  /**
   * Why the device was lost (a driver reset, the GPU process restarting, destroy()), once it is;
   * null while it works. Work on a lost device fails or returns nothing: see lostDeviceError.
   */
  lost: { reason: string; message: string } | null;
}

const LIMIT_KEYS = [
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupStorageSize",
  "maxComputeWorkgroupsPerDimension",
  "maxStorageBuffersPerShaderStage",
  "maxBindGroups",
  "maxUniformBufferBindingSize",
] as const;

let cached: Promise<GpuContext | null> | null = null;

function isSoftware(info: GPUAdapterInfo): boolean {
  const flagged = (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  const text = `${info.vendor} ${info.architecture} ${info.description}`.toLowerCase();
  return flagged === true || /llvmpipe|swiftshader|softpipe|lavapipe|warp|software/.test(text);
}

/**
 * True when the environment variable KIBITZ_NO_GPU is set to 1: the process then behaves as on a
 * machine without a WebGPU adapter (tests and tasks check the CPU-only path this way).
 */
export function gpuDisabledByEnv(): boolean {
  return envValue("KIBITZ_NO_GPU") === "1"; // unreadable: nothing was asked for
}

async function acquire(): Promise<GpuContext | null> {
  if (gpuDisabledByEnv()) return null;
  if (typeof navigator === "undefined" || !("gpu" in navigator) || !navigator.gpu) return null;
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  } catch {
    return null;
  }
  if (!adapter) return null;
  // The device defaults are the spec minimums; raise every limit we rely on to what the adapter offers.
  const requiredLimits: Record<string, number> = {};
  for (const k of LIMIT_KEYS) {
    const v = (adapter.limits as unknown as Record<string, number>)[k];
    if (typeof v === "number") requiredLimits[k] = v;
  }
  const timestamps = adapter.features.has("timestamp-query");
  const requiredFeatures: GPUFeatureName[] = timestamps ? ["timestamp-query"] : [];
  // f16 storage for network inference (src/nn/gpu/f16.ts) where the adapter offers it.
  if (adapter.features.has("shader-f16")) requiredFeatures.push("shader-f16");
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  device.addEventListener("uncapturederror", (ev) => {
    console.error(`webgpu: uncaptured error: ${(ev as GPUUncapturedErrorEvent).error.message}`);
  });
  const info = adapter.info;
  const report: AdapterReport = {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallback: isSoftware(info),
    features: [...adapter.features].sort(),
    limits: Object.fromEntries(
      LIMIT_KEYS.map((k) => [k, (device.limits as unknown as Record<string, number>)[k]]),
    ),
  };
  const ctx: GpuContext = {
    adapter,
    device,
    report,
    timestamps,
    modules: new Map(),
    pipelines: new Map(),
    lost: null,
  };
  device.lost.then((info) => {
    ctx.lost = { reason: info.reason ?? "unknown", message: info.message };
    // The shared context: the next getGpu() acquires a new device.
    if (shared === ctx) cached = shared = null;
  });
  return ctx;
}

/** The context getGpu() handed out last, while its device works. */
let shared: GpuContext | null = null;

/**
 * A context with a device of its own, not the shared one (null without an adapter): for work that
 * must not share a device's fate or its error scopes with the rest of the process.
 */
export function acquireGpu(): Promise<GpuContext | null> {
  return acquire();
}

/**
 * The gpu_lost error for work that failed with `cause` on `ctx`, when its device is lost (null
 * when it is not, after a short wait: the loss can be reported just after the failure it caused).
 */
export async function lostDeviceError(
  ctx: GpuContext,
  what: string,
  cause?: unknown,
): Promise<KibitzError | null> {
  if (!ctx.lost) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise((r) => timer = setTimeout(r, LOSS_WAIT_MS));
    await Promise.race([ctx.device.lost, waited]);
    clearTimeout(timer);
  }
  const lost = ctx.lost;
  if (!lost) return null;
  return new KibitzError(
    "gpu_lost",
    `${what}: the GPU device was lost (${lost.reason}${
      lost.message ? `: ${lost.message}` : ""
    }); ` +
      "work on it since the last checkpoint is gone: run again (a new device is acquired) or " +
      "use --backend cpu",
    { cause },
  );
}

/** A gpu_lost error's message without its advice (for callers that recover by themselves). */
export function lostDeviceSummary(e: Error): string {
  return e.message.replace(/; work on it since .*$/, "");
}

/**
 * The error to throw for `e`, a failure of work on `ctx`: gpu_lost when the device is lost, else
 * `e` itself (our own refusals, a KibitzError, are not awaited: they are not the device's doing).
 */
export async function deviceFailure(ctx: GpuContext, what: string, e: unknown): Promise<unknown> {
  if (e instanceof KibitzError && !ctx.lost) return e;
  return (await lostDeviceError(ctx, what, e)) ?? e;
}

/**
 * Lost devices a long run survives by rebuilding on a new one (a self-play player's network, the
 * az loop's training, a pretraining run); past that the loss is reported.
 */
export const LOST_DEVICE_RETRIES = 3;

/** How long lostDeviceError waits for a loss to be reported after a failure. */
const LOSS_WAIT_MS = 50;

/**
 * Returns the shared GPU context, or null when no WebGPU adapter exists or KIBITZ_NO_GPU=1
 * (acquired once per process).
 */
export function getGpu(): Promise<GpuContext | null> {
  if (!cached) {
    const got = acquire();
    cached = got;
    got.then((ctx) => {
      if (cached !== got) return;
      // A loss reported before this resolved leaves the cache cleared.
      if (ctx?.lost) cached = null;
      else shared = ctx;
    });
  }
  return cached;
}

/** Returns the shared GPU context or throws a clear `no_gpu` error. */
export async function requireGpu(): Promise<GpuContext> {
  const ctx = await getGpu();
  if (!ctx) {
    throw new KibitzError(
      "no_gpu",
      gpuDisabledByEnv()
        ? "no WebGPU adapter: KIBITZ_NO_GPU=1 hides it (unset it, or use --backend cpu)"
        : "no WebGPU adapter found (use --backend cpu, or install a Vulkan driver such as Mesa's llvmpipe)",
    );
  }
  return ctx;
}

/** One-line human description of an adapter, e.g. `llvmpipe (LLVM 15) [software]`. */
export function describeAdapter(r: AdapterReport): string {
  const name = r.description || [r.vendor, r.architecture, r.device].filter(Boolean).join(" ") ||
    "unknown adapter";
  return `${name}${r.isFallback ? " [software]" : ""}`;
}

/** Backend names accepted by every task. */
export type BackendName = "cpu" | "gpu" | "auto";

/** Resolves `auto` to the GPU when an adapter exists; `gpu` without one is a clear error. */
export async function resolveBackend(name: string): Promise<"cpu" | "gpu"> {
  if (name === "cpu") return "cpu";
  if (name === "gpu") {
    await requireGpu();
    return "gpu";
  }
  if (name === "auto") return (await getGpu()) ? "gpu" : "cpu";
  throw new KibitzError("bad_args", `unknown backend "${name}" (expected cpu, gpu or auto)`);
}

/** Destroys the shared device so the process can exit promptly. */
export async function releaseGpu(): Promise<void> {
  if (!cached) return;
  const ctx = await cached;
  cached = shared = null; // its loss then clears nothing a later getGpu() cached
  ctx?.device.destroy();
}

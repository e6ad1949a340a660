// Whether this machine can have a hardware GPU at all, known without loading a graphics driver.
// Looking for a WebGPU adapter loads the Vulkan loader and every driver it finds (64 MB resident
// with Mesa's llvmpipe), only to learn on a GPU-less Linux server that the one adapter is a
// software one, which `auto` never takes. On Linux a hardware GPU's driver needs a device node:
// /dev/dri/renderD* (Mesa's and AMD's drivers, Intel, virtio-gpu), /dev/nvidia* (NVIDIA's), /dev/dxg
// (WSL 2's GPU passthrough), or a mobile driver's own (GPU_NODES). Without any of them `auto` can
// take the CPU without probing.

import { envValue } from "../env.ts";

/** /dev names of GPU drivers outside /dev/dri: NVIDIA's, WSL 2's, Arm Mali's, Adreno's, PowerVR's. */
const GPU_NODES = ["nvidia", "dxg", "mali", "kgsl", "pvr"];

/** The file system facts the check reads (a seam for tests). */
export interface DeviceNodes {
  os: string;
  /** Names in a folder, or null when it cannot be read (missing, no permission). */
  list(dir: string): string[] | null;
}

const realNodes: DeviceNodes = {
  os: typeof Deno === "undefined" ? "browser" : Deno.build.os,
  list(dir) {
    // Never a permission prompt: without read access to /dev the answer is "may have one".
    if (Deno.permissions.querySync({ name: "read", path: dir }).state !== "granted") return null;
    try {
      return [...Deno.readDirSync(dir)].map((e) => e.name);
    } catch {
      return null;
    }
  },
};

/**
 * Why this machine has no hardware GPU (Linux with no GPU device node), or null when it may have
 * one (a node exists, another OS, a browser, or /dev cannot be read).
 */
export function hardwareGpuAbsent(nodes: DeviceNodes = realNodes): string | null {
  // KIBITZ_GPU_PROBE=1: look for an adapter whatever /dev shows (a driver reached another way).
  if (nodes.os !== "linux" || envValue("KIBITZ_GPU_PROBE") === "1") return null;
  const dev = nodes.list("/dev");
  if (dev === null) return null;
  if (dev.some((n) => GPU_NODES.some((p) => n.startsWith(p)))) return null;
  const dri = nodes.list("/dev/dri");
  if (dri?.some((n) => n.startsWith("renderD") || n.startsWith("card"))) return null;
  return "no GPU device node: /dev/dri/renderD*, /dev/nvidia*, /dev/dxg";
}

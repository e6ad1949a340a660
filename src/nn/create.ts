import { getGpu, requireGpu, resolveBackend } from "../gpu/device.ts";
import { hardwareGpuAbsent } from "../gpu/hardware_nodes.ts";
import { FastCpuBackend } from "./cpu_backend.ts";
import { CpuNet, GpuNet, type PolicyValueNet } from "./net.ts";
import type { NetWeights } from "./params.ts";

/** What a task's `--backend` takes for a network, for its --help. */
export const NET_BACKEND_HELP =
  "auto (a hardware GPU, else cpu-fast), gpu, cpu-fast (the fast CPU ops) or cpu (reference ops)";

/**
 * Builds the network on `cpu` (reference ops), `cpu-fast` (the fast CPU ops, same results up to
 * f32 rounding), `gpu` (an error without an adapter, a software one included) or `auto`: a
 * hardware GPU when there is one, else the fast CPU ops. A software adapter (llvmpipe,
 * SwiftShader) is never picked by `auto`: it ran Hive self-play at 27 playouts/s where the fast
 * CPU ops ran 1,204 (2 x 16 cells network, this 2-core machine).
 */
export async function createNet(weights: NetWeights, backend = "auto"): Promise<PolicyValueNet> {
  if (backend === "cpu-fast") return new CpuNet(weights, new FastCpuBackend());
  if (backend === "auto") {
    // Where no hardware GPU can exist, the graphics driver is not loaded only to find that out.
    if (hardwareGpuAbsent()) return new CpuNet(weights, new FastCpuBackend());
    const ctx = await getGpu();
    if (ctx && !ctx.report.isFallback) return await GpuNet.create(ctx, weights);
    return new CpuNet(weights, new FastCpuBackend());
  }
  const which = await resolveBackend(backend);
  if (which === "cpu") return new CpuNet(weights);
  const ctx = (await getGpu()) ?? (await requireGpu());
  return await GpuNet.create(ctx, weights);
}

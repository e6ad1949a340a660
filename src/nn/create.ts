import { getGpu, requireGpu, resolveBackend } from "../gpu/device.ts";
import { FastCpuBackend } from "./cpu_backend.ts";
import { CpuNet, GpuNet, type PolicyValueNet } from "./net.ts";
import type { NetWeights } from "./params.ts";

/**
 * Builds the network on `cpu` (reference ops), `cpu-fast` (the fast CPU ops, same results up to
 * f32 rounding), `gpu` (an error without an adapter) or `auto` (GPU when present).
 */
export async function createNet(weights: NetWeights, backend = "auto"): Promise<PolicyValueNet> {
  if (backend === "cpu-fast") return new CpuNet(weights, new FastCpuBackend());
  const which = await resolveBackend(backend);
  if (which === "cpu") return new CpuNet(weights);
  const ctx = (await getGpu()) ?? (await requireGpu());
  return await GpuNet.create(ctx, weights);
}

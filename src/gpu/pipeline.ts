import { KibitzError } from "../errors.ts";
import type { GpuContext } from "./device.ts";
import { withValidation } from "./error_scope.ts";

/** Compiles (or reuses) a shader module; compilation errors throw with the WGSL messages and lines. */
export async function shaderModule(
  ctx: GpuContext,
  code: string,
  label = "shader",
): Promise<GPUShaderModule> {
  const hit = ctx.modules.get(code);
  if (hit) return hit;
  // Popped before the compilation info is awaited, so that no other caller's scope interleaves.
  const { value: module, error: err } = await withValidation(
    ctx,
    () => ctx.device.createShaderModule({ code, label }),
  );
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === "error");
  if (errors.length > 0 || err) {
    const text = errors.map((m) => `  ${label}:${m.lineNum}:${m.linePos}: ${m.message}`).join("\n");
    throw new KibitzError(
      "shader_error",
      `WGSL compilation failed for ${label}:\n${text || err?.message}`,
    );
  }
  ctx.modules.set(code, module);
  return module;
}

/** Binding kinds for an explicit layout, in binding order (group 0); "uniform-dynamic": a uniform
 * bound with a dynamic offset (setBindGroup's offsets pick each dispatch's slice of one buffer). */
export type BindingKind = "storage" | "read-only-storage" | "uniform" | "uniform-dynamic";

/**
 * Creates (or reuses) a compute pipeline; validation errors throw instead of silently yielding zeros.
 * With `bindings`, the layout is explicit, so entry points that use only some bindings of a shared
 * declaration still take the full bind group ("auto" layouts drop unused bindings).
 */
export async function computePipeline(
  ctx: GpuContext,
  code: string,
  entryPoint = "main",
  constants: Record<string, number> = {},
  label = entryPoint,
  bindings?: BindingKind[],
): Promise<GPUComputePipeline> {
  const key = `${entryPoint}\u0000${JSON.stringify(constants)}\u0000${
    bindings ?? "auto"
  }\u0000${code}`;
  const hit = ctx.pipelines.get(key);
  if (hit) return hit;
  const module = await shaderModule(ctx, code, label);
  const { value: pipeline, error: err } = await withValidation(ctx, () => {
    const layout: GPUPipelineLayout | "auto" = bindings
      ? ctx.device.createPipelineLayout({
        bindGroupLayouts: [
          ctx.device.createBindGroupLayout({
            entries: bindings.map((type, binding) => ({
              binding,
              visibility: 4, // GPUShaderStage.COMPUTE
              buffer: type === "uniform-dynamic"
                ? { type: "uniform" as const, hasDynamicOffset: true }
                : { type },
            })),
          }),
        ],
      })
      : "auto";
    return ctx.device.createComputePipeline({
      label,
      layout,
      compute: { module, entryPoint, constants },
    });
  });
  if (err) throw new KibitzError("shader_error", `pipeline ${label} is invalid: ${err.message}`);
  ctx.pipelines.set(key, pipeline);
  return pipeline;
}

/** Creates a bind group for group 0 from buffers in binding order, checking for validation errors. */
export async function bindGroup(
  ctx: GpuContext,
  pipeline: GPUComputePipeline,
  buffers: GPUBuffer[],
  group = 0,
): Promise<GPUBindGroup> {
  const { value: bg, error: err } = await withValidation(ctx, () =>
    ctx.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(group),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    }));
  if (err) {
    throw new KibitzError(
      "shader_error",
      `bind group for ${pipeline.label} is invalid: ${err.message}`,
    );
  }
  return bg;
}

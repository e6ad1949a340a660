import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import convSrc from "../../../shaders/nn/conv.wgsl" with { type: "text" };
import matmulSrc from "../../../shaders/nn/matmul.wgsl" with { type: "text" };
import elementwiseSrc from "../../../shaders/nn/elementwise.wgsl" with { type: "text" };
import batchnormSrc from "../../../shaders/nn/batchnorm.wgsl" with { type: "text" };
import lossSrc from "../../../shaders/nn/loss.wgsl" with { type: "text" };
import sgdSrc from "../../../shaders/nn/sgd.wgsl" with { type: "text" };

const ENTRIES = {
  convForward: [convSrc, "forward"],
  convWgrad: [convSrc, "wgrad"],
  convFlip: [convSrc, "flip"],
  matmul: [matmulSrc, "plain"],
  matmulBias: [matmulSrc, "with_bias"],
  matmulThin: [matmulSrc, "thin_plain"],
  matmulThinBias: [matmulSrc, "thin_bias"],
  relu: [elementwiseSrc, "relu"],
  reluBackward: [elementwiseSrc, "relu_backward"],
  add: [elementwiseSrc, "add"],
  colsum: [elementwiseSrc, "colsum"],
  bnBatchStats: [batchnormSrc, "batch_stats"],
  bnRunningStats: [batchnormSrc, "running_stats"],
  bnApply: [batchnormSrc, "apply"],
  bnBackwardReduce: [batchnormSrc, "backward_reduce"],
  bnBackwardApply: [batchnormSrc, "backward_apply"],
  softmax: [lossSrc, "softmax"],
  policyLoss: [lossSrc, "policy"],
  valueOnly: [lossSrc, "value_only"],
  valueLoss: [lossSrc, "value"],
  sgdStep: [sgdSrc, "step"],
  sumsq: [sgdSrc, "sumsq"],
} as const;

/** Names of the network's compute pipelines. */
export type KernelName = keyof typeof ENTRIES;

/** Every compiled pipeline of the network core. */
export type NnKernels = Record<KernelName, GPUComputePipeline>;

const loaded = new WeakMap<GpuContext, Promise<NnKernels>>();

/** Compiles (once per device) every WGSL kernel of the network core. */
export function loadKernels(ctx: GpuContext): Promise<NnKernels> {
  let hit = loaded.get(ctx);
  if (!hit) {
    hit = (async () => {
      const out: Partial<NnKernels> = {};
      for (const [name, [src, entry]] of Object.entries(ENTRIES)) {
        out[name as KernelName] = await computePipeline(ctx, src, entry, {}, `nn.${entry}`);
      }
      return out as NnKernels;
    })();
    loaded.set(ctx, hit);
  }
  return hit;
}

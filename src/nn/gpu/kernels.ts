import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import convSrc from "../../../shaders/nn/conv.wgsl" with { type: "text" };
import convDirectSrc from "../../../shaders/nn/conv_direct.wgsl" with { type: "text" };
import matmulSrc from "../../../shaders/nn/matmul.wgsl" with { type: "text" };
import elementwiseSrc from "../../../shaders/nn/elementwise.wgsl" with { type: "text" };
import batchnormSrc from "../../../shaders/nn/batchnorm.wgsl" with { type: "text" };
import batchnormDirectSrc from "../../../shaders/nn/batchnorm_direct.wgsl" with { type: "text" };
import lossDirectSrc from "../../../shaders/nn/loss_direct.wgsl" with { type: "text" };
import lossSrc from "../../../shaders/nn/loss.wgsl" with { type: "text" };
import sgdSrc from "../../../shaders/nn/sgd.wgsl" with { type: "text" };

// The wide-tile variant of the convolution: 128 x 128 outputs per workgroup, 8 x 8 per thread.
const convWideSrc = convSrc.replace("const BM = 64u;", "const BM = 128u;")
  .replace("const BN = 64u;", "const BN = 128u;").replace("const BK = 16u;", "const BK = 8u;");

const ENTRIES = {
  convForward: [convSrc, "forward"],
  convWgrad: [convSrc, "wgrad"],
  convFlip: [convSrc, "flip"],
  convForwardWide: [convWideSrc, "forward"],
  convWgradWide: [convWideSrc, "wgrad"],
  convForwardDirect: [convDirectSrc, "forward"],
  convWgradDirect: [convDirectSrc, "wgrad"],
  matmul: [matmulSrc, "plain"],
  matmulBias: [matmulSrc, "with_bias"],
  matmulThin: [matmulSrc, "thin_plain"],
  matmulThinBias: [matmulSrc, "thin_bias"],
  relu: [elementwiseSrc, "relu"],
  reluBackward: [elementwiseSrc, "relu_backward"],
  add: [elementwiseSrc, "add"],
  colsum: [elementwiseSrc, "colsum"],
  sumSplits: [elementwiseSrc, "sum_splits"],
  bnBatchStats: [batchnormSrc, "batch_stats"],
  bnRunningStats: [batchnormSrc, "running_stats"],
  bnApply: [batchnormSrc, "apply"],
  bnBackwardReduce: [batchnormSrc, "backward_reduce"],
  bnBackwardApply: [batchnormSrc, "backward_apply"],
  bnBatchStatsDirect: [batchnormDirectSrc, "batch_stats"],
  bnBackwardReduceDirect: [batchnormDirectSrc, "backward_reduce"],
  softmax: [lossSrc, "softmax"],
  policyLoss: [lossSrc, "policy"],
  softmaxDirect: [lossDirectSrc, "softmax"],
  policyLossDirect: [lossDirectSrc, "policy"],
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

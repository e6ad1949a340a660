// Neural network core: tensors, ops (CPU reference + WGSL kernels), the ResNet, training, checkpoints.
export type { NnBackend, SgdHyper } from "./backend.ts";
export {
  forwardMacs,
  HIVE_MOVES,
  NET_PRESETS,
  type NetConfig,
  netPreset,
  validateConfig,
} from "./config.ts";
export { type CpuTensor, cpuTensor, numel, rng, type Shaped, shapeString } from "./tensor.ts";
export {
  batchNorm,
  batchNormBackward,
  BN_EPS,
  BN_MOMENTUM,
  type BnParams,
} from "./cpu/batchnorm.ts";
export { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "./cpu/conv.ts";
export { add, relu, reluBackward, tanh } from "./cpu/elementwise.ts";
export { linear, linearBackward } from "./cpu/linear.ts";
export { l2Penalty, policyLoss, valueLoss } from "./cpu/loss.ts";
export { CpuBackend } from "./cpu_backend.ts";
export { GpuRecorder } from "./gpu/backend.ts";
export { loadKernels, type NnKernels } from "./gpu/kernels.ts";
export { type GpuTensor, readTensors, TensorPool, uploadTensor } from "./gpu/tensor.ts";
export { type NetTensors, runPass } from "./graph.ts";
export {
  CpuNet,
  GpuNet,
  type NetBatch,
  type NetOutputs,
  type PolicyValueNet,
  type TrainStats,
} from "./net.ts";
export { cosineLr, defaultSgd, type SgdConfig, sgdStep } from "./optimizer.ts";
export { countParams, initWeights, type NetWeights, type ParamSpec, paramSpecs } from "./params.ts";
export { syntheticBatch, Trainer } from "./train.ts";
export {
  CHECKPOINT_VERSION,
  crc32,
  decodeCheckpoint,
  encodeCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "./checkpoint.ts";
export { createNet } from "./create.ts";

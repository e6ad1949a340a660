// Neural network core: ops (CPU reference + WGSL kernels), the ResNet, training, checkpoints.
export type { NnBackend, SgdHyper } from "./backend.ts";
export * as nnOps from "./ops.ts";
export type { CpuTensor, Shaped } from "./tensor.ts";
export {
  type CellsConfig,
  forwardMacs,
  HIVE_MOVES as NN_HIVE_MOVES,
  NET_PRESETS,
  type NetConfig,
  netPreset,
  sameCells,
  validateConfig as validateNetConfig,
} from "./config.ts";
export { CpuBackend as NnCpuBackend } from "./cpu_backend.ts";
export { cellLogits, cellLogitsBackward } from "./cpu/cell_logits.ts";
export { FastInference } from "./cpu/fast_infer.ts";
export { GpuRecorder as NnGpuRecorder, type RecordedOp } from "./gpu/backend.ts";
export {
  HARDWARE_TILES as NN_HARDWARE_TILES,
  type KernelFamily as NnKernelFamily,
  type KernelTiles as NnKernelTiles,
  loadKernels as loadNnKernels,
  type NnKernels,
  TEST_TILES as NN_TEST_TILES,
} from "./gpu/kernels.ts";
export { type GpuTensor, readTensors, TensorPool, uploadTensor } from "./gpu/tensor.ts";
export { thinConvParity } from "./gpu/conv_thin_check.ts";
export { compactReadbackParity } from "./compact_check.ts";
export { RecoveringNet } from "./recovering_net.ts";
export { FC_CHECK_CASES, fcParity } from "./gpu/fc_check.ts";
export { type FcKernelPolicy, tuneFc } from "./gpu/fc_tune.ts";
export { COMPACT_WIDTH, defaultCompactWidth, maxLegal, scatterCompact } from "./compact_probs.ts";
export {
  expandSparsePlanes,
  packSparsePlanes,
  SPARSE_MIN_BATCH,
  sparseLayout,
} from "./sparse_planes.ts";
export {
  allocPlanes,
  halfBits,
  hasFloat16Array,
  isHalfPlanes,
  type Planes,
  planesF32,
} from "./planes.ts";
export {
  BRIDGE_CASES as WINOGRAD_BRIDGE_CASES,
  BRIDGE_CASES_QUICK as WINOGRAD_BRIDGE_CASES_QUICK,
  type BridgeCase as WinogradBridgeCase,
  contractionTolerance,
  winogradBridgeParity,
} from "./gpu/winograd_bridge_check.ts";
export { type BridgeStyle, parseBridgeStyle } from "./gpu/winograd_bridge.ts";
export {
  STAGED_CASES as WINOGRAD_STAGED_CASES,
  STAGED_CASES_QUICK as WINOGRAD_STAGED_CASES_QUICK,
  winogradStagedParity,
} from "./gpu/winograd_staged_check.ts";
export {
  defaultMapMode as defaultNnMapMode,
  type HostPhases as NnHostPhases,
  hostPhases as nnHostPhases,
  type MapMode as NnMapMode,
  ReadbackQueue as NnReadbackQueue,
} from "./gpu/readback.ts";
export { type NetTensors, type PassInputs, runPass } from "./graph.ts";
export {
  CpuNet,
  GpuNet,
  type NetBatch,
  type NetOutputs,
  type NetPrecision,
  type PolicyValueNet,
  resolvePrecision as resolveNetPrecision,
  type TrainBatch,
  type TrainStats,
} from "./net.ts";
export { defaultSgd, type SgdConfig } from "./optimizer.ts";
export { InferencePipeline } from "./pipeline.ts";
export {
  chooseWinograd,
  parseWinograd,
  winogradConv2d,
  type WinogradSetting,
  type WinogradTile,
} from "./winograd.ts";
export { type MixedTiling, mixedTiling, winogradMixedConv2d } from "./winograd_mixed.ts";
export { parseWinogradMixed, type WinogradMixedPolicy } from "./gpu/winograd_mixed_tune.ts";
export { MIXED_CHECK_CASES, winogradMixedParity } from "./gpu/winograd_mixed_check.ts";
export {
  CELLS_CONV,
  type FoldedConv,
  foldedLayers,
  type FusedBackend,
  runFusedInference,
} from "./graph_fused.ts";
export { countParams, initWeights, type NetWeights, type ParamSpec, paramSpecs } from "./params.ts";
export { syntheticBatch, Trainer } from "./train.ts";
export { runTrainSteps, type TrainStepsOptions } from "./train_steps.ts";
export { syntheticCellsBatch } from "./cells_batch.ts";
export {
  type Checkpoint,
  CHECKPOINT_VERSION,
  decodeCheckpoint,
  encodeCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "./checkpoint.ts";
export { createNet } from "./create.ts";
export { cpuFusedInfer, f16round, F16TwinBackend, roundF16 as roundNnF16 } from "./f16.ts";
export { deviceHasF16 } from "./gpu/f16.ts";
export {
  hardwareCandidates as winogradGemmCandidates,
  type WinoCandidate,
  type WinoGemm,
  winogradGemmSource,
} from "./gpu/winograd_gemm.ts";
export {
  forgetTunings,
  pickWinoKernels,
  tuneWinograd,
  winogradTuneLog,
  type WinoTuneResult,
} from "./gpu/winograd_tune.ts";
export { kernelFingerprint, setTuneCacheEnabled, tuneCachePath } from "./gpu/tune_cache.ts";
/** The latency measurements of `bench nn` (readback floor, calls, pipelining), for browser pages. */
export * as nnLatency from "./bench_latency.ts";

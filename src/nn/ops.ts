// The TypeScript reference ops and host-tensor helpers, re-exported as one namespace (`nnOps`).
export {
  batchNorm,
  batchNormBackward,
  BN_EPS,
  BN_MOMENTUM,
  type BnParams,
} from "./cpu/batchnorm.ts";
export { conv2d, conv2dBackwardInput, conv2dBackwardWeight, convGeometry } from "./cpu/conv.ts";
export { add, relu, reluBackward, tanh } from "./cpu/elementwise.ts";
export { linear, linearBackward } from "./cpu/linear.ts";
export { l2Penalty, policyLoss, valueLoss } from "./cpu/loss.ts";
export { cosineLr, sgdStep } from "./optimizer.ts";
export { cpuTensor, numel, rng, shapeString } from "./tensor.ts";

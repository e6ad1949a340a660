import type { NetConfig } from "./config.ts";
import { type CpuTensor, cpuTensor, gaussian, numel, rng } from "./tensor.ts";

/** How a tensor of the model is initialized and whether SGD trains it. */
export type ParamRole = "conv" | "fc" | "bias" | "gamma" | "beta" | "mean" | "var";

/** One named tensor of the model. */
export interface ParamSpec {
  name: string;
  shape: number[];
  role: ParamRole;
  /** False for batch-norm running statistics (saved in checkpoints, not trained). */
  trainable: boolean;
}

function bnSpecs(prefix: string, c: number): ParamSpec[] {
  return [
    { name: `${prefix}.gamma`, shape: [c], role: "gamma", trainable: true },
    { name: `${prefix}.beta`, shape: [c], role: "beta", trainable: true },
    { name: `${prefix}.mean`, shape: [c], role: "mean", trainable: false },
    { name: `${prefix}.var`, shape: [c], role: "var", trainable: false },
  ];
}

/** The model's tensors in a fixed order (the checkpoint order). */
export function paramSpecs(cfg: NetConfig): ParamSpec[] {
  const f = cfg.filters, hw = cfg.height * cfg.width;
  const conv = (name: string, co: number, ci: number, k: number): ParamSpec => ({
    name,
    shape: [co, ci, k, k],
    role: "conv",
    trainable: true,
  });
  const fc = (name: string, out: number, inp: number): ParamSpec[] => [
    { name: `${name}.w`, shape: [out, inp], role: "fc", trainable: true },
    { name: `${name}.b`, shape: [out], role: "bias", trainable: true },
  ];
  const specs: ParamSpec[] = [conv("stem.conv", f, cfg.planes, 3), ...bnSpecs("stem.bn", f)];
  for (let i = 0; i < cfg.blocks; i++) {
    specs.push(conv(`block${i}.conv1`, f, f, 3), ...bnSpecs(`block${i}.bn1`, f));
    specs.push(conv(`block${i}.conv2`, f, f, 3), ...bnSpecs(`block${i}.bn2`, f));
  }
  if (cfg.cells) {
    // The cells head: 1x1 conv + BN (+ ReLU) to `hidden`, a plain 1x1 conv to the score planes,
    // and the per-move-kind biases.
    const c = cfg.cells;
    specs.push(
      conv("policy.conv", c.hidden, f, 1),
      ...bnSpecs("policy.bn", c.hidden),
      // 1/sqrt(fan-in) like a fully connected layer: no ReLU follows, logits start near 0 +- 1.
      { ...conv("policy.cells.w", c.planes, c.hidden, 1), role: "fc" },
      { name: "policy.cells.b", shape: [c.biases], role: "bias", trainable: true },
    );
  } else {
    specs.push(
      conv("policy.conv", 2, f, 1),
      ...bnSpecs("policy.bn", 2),
      ...fc("policy.fc", cfg.moves, 2 * hw),
    );
  }
  // The pooled value head reads valuePool channel means; the board-wide one a whole plane.
  const vp = cfg.valuePool;
  specs.push(conv("value.conv", vp ?? 1, f, 1), ...bnSpecs("value.bn", vp ?? 1));
  specs.push(...fc("value.fc1", cfg.valueHidden, vp ?? hw), ...fc("value.fc2", 1, cfg.valueHidden));
  return specs;
}

/** Host copy of every model tensor, by name, in spec order. */
export interface NetWeights {
  config: NetConfig;
  specs: ParamSpec[];
  tensors: Map<string, CpuTensor>;
}

/** Fresh weights: He-normal convolutions, 1/sqrt(fan-in) fully connected, BN gamma 1, zeros else. */
export function initWeights(config: NetConfig, seed = 1): NetWeights {
  const specs = paramSpecs(config);
  const normal = gaussian(rng(seed));
  const tensors = new Map<string, CpuTensor>();
  for (const s of specs) {
    const t = cpuTensor(s.shape);
    const fanIn = numel(s.shape) / s.shape[0];
    if (s.role === "conv" || s.role === "fc") {
      const std = Math.sqrt((s.role === "conv" ? 2 : 1) / fanIn);
      for (let i = 0; i < t.data.length; i++) t.data[i] = normal() * std;
    } else if (s.role === "gamma" || s.role === "var") t.data.fill(1);
    tensors.set(s.name, t);
  }
  return { config: { ...config }, specs, tensors };
}

/** Number of trainable values of a model config. */
export function countParams(config: NetConfig): number {
  return paramSpecs(config).filter((s) => s.trainable).reduce((a, s) => a + numel(s.shape), 0);
}

import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { stopOnSignal } from "../src/cli/atomic.ts";
import { ensureOutputFile } from "../src/cli/paths.ts";
import { Progress } from "../src/cli/progress.ts";
import { describeAdapter, getGpu, releaseGpu } from "../src/gpu/mod.ts";
import { netPreset } from "../src/nn/config.ts";
import { createNet, NET_BACKEND_HELP } from "../src/nn/create.ts";
import { countParams } from "../src/nn/params.ts";
import { runSynthetic } from "../src/nn/train.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task nn-train [--preset tiny|small|default] [--steps N] [--batch B] [--backend auto|gpu|cpu-fast|cpu] [--checkpoint FILE]",
    "Trains the policy/value ResNet on a learnable synthetic task (SGD momentum 0.9, weight decay 1e-4,\n" +
      "cosine LR 0.01 -> 0.0001), checkpointing atomically and resuming from the checkpoint if it exists.",
    {
      preset: {
        type: "string",
        default: "tiny",
        help: "model size: tiny, small or default (19 x 256)",
      },
      steps: {
        type: "string",
        default: "200",
        help: "total SGD steps (the cosine schedule's length)",
      },
      batch: { type: "string", default: "16", help: "positions per mini-batch" },
      backend: { type: "string", default: "auto", help: NET_BACKEND_HELP },
      seed: { type: "string", default: "1", help: "seed for weights and data" },
      checkpoint: { type: "string", help: "checkpoint file to resume from and save to" },
      every: {
        type: "string",
        default: "50",
        help: "save the checkpoint every N steps (0: only at the end)",
      },
    },
  );
  if (!args) return;
  const config = netPreset(String(args.values.preset));
  const steps = intOption(args.values, "steps", 200, 1);
  const batch = intOption(args.values, "batch", 16, 1, 4096);
  const backend = String(args.values.backend);
  if (args.positionals.length) {
    throw new KibitzError(
      "bad_args",
      `argument "${args.positionals[0]}": unexpected (this task takes options only)`,
    );
  }
  const checkpoint = args.values.checkpoint === undefined ? null : String(args.values.checkpoint);
  // A checkpoint that cannot be saved must fail now, not after the training run.
  if (checkpoint !== null) await ensureOutputFile(checkpoint, "--checkpoint");
  const progress = new Progress("nn-train");
  const stop = stopOnSignal(
    "nn-train: saving the checkpoint and stopping",
  );
  const run = await runSynthetic(
    async (w) => await createNet(w, backend),
    config,
    {
      steps,
      batch,
      seed: intOption(args.values, "seed", 1, 0),
      checkpoint,
      every: intOption(args.values, "every", 50, 0),
      stop: () => stop.stopped,
    },
    (step, s) =>
      progress.update(
        `step ${step}/${steps} loss ${s.loss.toFixed(4)} (policy ${s.policyLoss.toFixed(4)}, ` +
          `value ${s.valueLoss.toFixed(4)}) lr ${s.lr.toExponential(2)}`,
      ),
  ).finally(stop.release);
  const trained = Math.max(0, run.endStep - run.startStep);
  progress.done(
    trained > 0
      ? `${trained} steps in ${progress.elapsed().toFixed(1)} s${
        stop.stopped ? ` (stopped at step ${run.endStep}; run again to continue)` : ""
      }`
      : `nothing to train: the checkpoint is at step ${run.startStep}, --steps is ${steps}`,
  );
  const gpu = run.net.backend === "gpu" ? await getGpu() : null;
  console.log(
    `model ${args.values.preset} (${config.blocks} x ${config.filters}, ${
      countParams(config)
    } parameters) on ${gpu ? describeAdapter(gpu.report) : "the CPU reference"}`,
  );
  console.log(
    `resumed at step ${run.startStep}; held-out loss ${run.before.toFixed(4)} -> ${
      run.after.toFixed(4)
    }`,
  );
  run.net.dispose();
  await releaseGpu();
});

import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ensureInput, ensureOutputFile } from "../src/cli/paths.ts";
import { Progress } from "../src/cli/progress.ts";
import { ReplayBuffer } from "../src/alphazero/buffer.ts";
import { azGames, azPreset } from "../src/alphazero/presets.ts";
import { trainFromBuffer } from "../src/alphazero/train.ts";
import { inputSize } from "../src/mcts/game.ts";
import { loadCheckpoint, saveCheckpoint } from "../src/nn/checkpoint.ts";
import { createNet, NET_BACKEND_HELP } from "../src/nn/create.ts";
import { initWeights } from "../src/nn/params.ts";
import { releaseGpu } from "../src/gpu/mod.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    `deno task train <${azGames().join("|")}> --buffer DIR --out FILE [--model FILE] [--steps N]`,
    "Training alone: SGD (momentum 0.9, weight decay 1e-4, cosine LR) on batches drawn uniformly\n" +
      "from the replay buffer, starting from --model (or random weights) and saving --out.",
    {
      buffer: { type: "string", help: "replay buffer folder" },
      out: { type: "string", help: "checkpoint to write" },
      model: { type: "string", help: "checkpoint to start from (default: random weights)" },
      steps: { type: "string", help: "SGD steps (default: preset)" },
      batch: { type: "string", help: "positions per batch (default: preset)" },
      seed: { type: "string", default: "1", help: "seed of the batches (and random weights)" },
      backend: { type: "string", default: "auto", help: NET_BACKEND_HELP },
    },
  );
  if (!args) return;
  const name = args.positionals[0];
  if (!name) throw new KibitzError("bad_args", `name a game: ${azGames().join(", ")}`);
  const v = args.values;
  if (v.buffer === undefined || v.out === undefined) {
    throw new KibitzError("bad_args", "--buffer and --out are required");
  }
  const p = azPreset(name);
  const seed = intOption(v, "seed", 1, 0);
  p.train.steps = intOption(v, "steps", p.train.steps, 1);
  p.train.batch = intOption(v, "batch", p.train.batch, 1, 4096);
  await ensureInput(String(v.buffer), "--buffer");
  if (v.model !== undefined) await ensureInput(String(v.model), "--model");
  await ensureOutputFile(String(v.out), "--out");
  const start = v.model === undefined ? null : await loadCheckpoint(String(v.model), p.net);
  const net = await createNet(start?.weights ?? initWeights(p.net, seed), String(v.backend));
  if (start?.velocity) net.setVelocity(start.velocity);
  const buffer = await ReplayBuffer.open(
    String(v.buffer),
    p.bufferCapacity,
    inputSize(p.game),
    p.game.moves,
    p.net.cells !== undefined,
  );
  const progress = new Progress("train");
  const s = await trainFromBuffer(net, buffer, p.train, 0, seed, (step, st) =>
    progress.update(
      `step ${step}/${p.train.steps} loss ${st.loss.toFixed(4)} (policy ${
        st.policyLoss.toFixed(4)
      }, value ${st.valueLoss.toFixed(4)}) lr ${st.lr.toExponential(2)}`,
    ));
  await saveCheckpoint(String(v.out), await net.weights(), { step: s.steps }, await net.velocity());
  progress.done(
    `${s.steps} steps on ${buffer.size} positions in ${progress.elapsed().toFixed(1)} s`,
  );
  console.log(JSON.stringify(s));
  net.dispose();
  await releaseGpu();
});

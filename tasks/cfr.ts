import { intOption, numberOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { Progress } from "../src/cli/progress.ts";
import { buildTree, CfrSolver, parseAlgorithm } from "../src/cfr/mod.ts";
import { smallGame } from "../src/games/mod.ts";

await runMain(() => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task cfr <kuhn|leduc> [--algorithm dcfr|dcfr+|cfr+|pdcfr+] [--iterations N] " +
      "[--regret-bits B] [--strategy-bits S] [--seed K] [--pruning C] [--schedule reference|paper] [--json]",
    "Solves Kuhn poker or Leduc hold'em with the CFR engine and reports exploitability and EVs.",
    {
      algorithm: { type: "string", default: "dcfr", help: "dcfr, dcfr+, cfr+ or pdcfr+" },
      iterations: { type: "string", help: "iterations (default: 1000)" },
      "regret-bits": { type: "string", default: "32", help: "regret storage bits: 32, 16, 8 or 4" },
      "strategy-bits": {
        type: "string",
        default: "32",
        help: "strategy storage bits: 32, 16, 8 or 4",
      },
      seed: { type: "string", default: "0", help: "stochastic-rounding seed" },
      pruning: {
        type: "string",
        default: "0",
        help: "regret-pruning threshold (0 = off; dcfr only)",
      },
      schedule: { type: "string", default: "reference", help: "DCFR schedule: reference or paper" },
      json: { type: "boolean", help: "print one JSON object" },
    },
  );
  if (!args) return;
  const [name, ...extra] = args.positionals;
  if (!name) throw new KibitzError("bad_args", "GAME: missing; give kuhn or leduc");
  if (extra.length) {
    throw new KibitzError("bad_args", `arguments "${extra.join(" ")}": unexpected after the game`);
  }
  const entry = smallGame(name);
  const v = args.values;
  const algorithm = parseAlgorithm(String(v.algorithm));
  const iterations = intOption(v, "iterations", entry.iterations, 1, 100_000_000);
  const regretBits = intOption(v, "regret-bits", 32);
  const strategyBits = intOption(v, "strategy-bits", 32);
  const seed = intOption(v, "seed", 0, 0, 0xffffffff);
  const pruning = numberOption(v, "pruning", 0);
  const schedule = String(v.schedule);
  if (schedule !== "reference" && schedule !== "paper") {
    throw new KibitzError("bad_args", `--schedule "${schedule}": must be reference or paper`);
  }

  const game = entry.make();
  const tree = buildTree(game);
  const solver = new CfrSolver(tree, game, {
    algorithm,
    regretBits,
    strategyBits,
    seed,
    pruning,
    schedule,
  });
  const progress = new Progress(`cfr ${name} ${algorithm}`);
  solver.run(iterations, (it) => {
    progress.update(`iteration ${it}/${iterations} (${(it / progress.elapsed()).toFixed(0)} it/s)`);
  });
  const seconds = progress.elapsed();
  const e = solver.exploitability();
  progress.done(`${iterations} iterations in ${seconds.toFixed(2)} s`);
  if (v.json) {
    console.log(JSON.stringify({
      game: name,
      algorithm,
      iterations,
      exploitability: e.chips,
      ev: e.ev,
      regret_bits: regretBits,
      strategy_bits: strategyBits,
    }));
    return;
  }
  console.log(
    `game:           ${name} (${tree.size} public nodes, ${tree.blockNode.length} player nodes)`,
  );
  console.log(
    `algorithm:      ${algorithm}, regret ${regretBits} bits, strategy ${strategyBits} bits`,
  );
  console.log(`iterations:     ${iterations} in ${seconds.toFixed(2)} s`);
  console.log(
    `exploitability: ${e.chips.toExponential(3)} chips (${e.percent.toFixed(4)} % of the pot)`,
  );
  console.log(`EV:             player 1 ${e.ev[0].toFixed(6)}, player 2 ${e.ev[1].toFixed(6)}`);
  console.log(`exact value:    player 1 ${entry.value.toFixed(6)}`);
  console.log(`storage:        ${solver.storageBytes()} bytes`);
  const root = solver.averageStrategy(0);
  const H = tree.numHands[0], A = tree.numChildren[0];
  const acts = Array.from({ length: A }, (_, a) => tree.label[tree.firstChild[0] + a]);
  console.log(`average root strategy of player 1 (${acts.join(" / ")}):`);
  for (let h = 0; h < H; h++) {
    const row = acts.map((_, a) => root[a * H + h].toFixed(3)).join(" / ");
    console.log(`  ${game.handLabel(0, h).padEnd(3)} ${row}`);
  }
});

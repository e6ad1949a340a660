import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { Progress } from "../src/cli/progress.ts";
import { HiveGame } from "../src/hive/game.ts";
import { perft } from "../src/hive/perft.ts";
import { GAME_TYPES } from "../src/hive/pieces.ts";

await runMain(() => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task perft <GameType|GameString> <depth> [--divide]",
    "Counts Hive move-tree leaves (perft) from the start (or a GameString); prints the count last.\n" +
      `GameType: ${GAME_TYPES.join(", ")}.`,
    { divide: { type: "boolean", help: "print the count below each first move" } },
  );
  if (!args) return;
  const [type, depthText, ...extra] = args.positionals;
  if (!type || depthText === undefined || extra.length) {
    throw new KibitzError(
      "bad_args",
      "arguments: expected <GameType|GameString> <depth>, e.g. Base+MLP 4",
    );
  }
  const depth = Number(depthText);
  if (!/^\d+$/.test(depthText) || depth > 12) {
    throw new KibitzError("bad_args", `depth "${depthText}": must be an integer in [0, 12]`);
  }
  const g = HiveGame.fromGameString(type);
  const progress = new Progress("perft", 1000);
  const t0 = performance.now();
  let total = 0;
  if (args.values.divide || depth >= 5) {
    const moves = g.validMoves();
    moves.forEach((m, i) => {
      const s = g.moveString(m);
      g.play(m, s);
      const n = perft(g, depth - 1);
      g.undo();
      total += n;
      if (args.values.divide) console.log(`${s}\t${n}`);
      progress.update(`${i + 1}/${moves.length} first moves, ${total} nodes`);
    });
  } else {
    total = perft(g, depth);
  }
  const secs = (performance.now() - t0) / 1000;
  if (depth >= 5) progress.done(`${total} nodes in ${secs.toFixed(2)} s`);
  console.error(
    `${g.gameTypeString} depth ${depth}: ${secs.toFixed(3)} s, ${
      (total / secs / 1e6).toFixed(2)
    } M nodes/s`,
  );
  console.log(total);
});

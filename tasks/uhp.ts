import { parseTaskArgs } from "../src/cli/args.ts";
import { isKibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { UhpEngine } from "../src/uhp/engine.ts";
import { runUhpLoop } from "../src/uhp/loop.ts";
import { DEFAULT_HIVE_MODEL, loadUhpModel } from "../src/uhp/mcts_player.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task uhp [--model FILE|none]",
    "A Universal Hive Protocol engine on stdin/stdout (info, newgame, play, pass, validmoves,\n" +
      "bestmove, undo, options, perft). Every reply ends with `ok`; `exit` or end of input quits.\n" +
      "With a network (the shipped one by default) bestmove runs MCTS: `bestmove time hh:mm:ss`\n" +
      "searches for that long, `bestmove depth N` runs N x 100 playouts, both capped by\n" +
      "BestMoveMaxTime; `options set UseModel 0` (or --model none) switches to alpha-beta.",
    {
      model: {
        type: "string",
        default: DEFAULT_HIVE_MODEL,
        help: "network file (models/*.kbhz or a .kbnn checkpoint); none: alpha-beta only",
      },
    },
  );
  if (!args) return;
  const path = String(args.values.model);
  let model = null;
  if (path !== "none") {
    try {
      model = await loadUhpModel(path);
    } catch (e) {
      // A missing default network is not fatal: the engine plays alpha-beta.
      if (!(path === DEFAULT_HIVE_MODEL && isKibitzError(e, "not_found"))) throw e;
      console.error(`uhp: no network at ${path}; bestmove uses alpha-beta`);
    }
  }
  const encoder = new TextEncoder();
  const writer = Deno.stdout.writable.getWriter();
  await runUhpLoop(
    new UhpEngine(undefined, model),
    Deno.stdin.readable,
    (text) => writer.write(encoder.encode(text)),
  );
  await writer.close().catch(() => {});
});

import { parseTaskArgs } from "../src/cli/args.ts";
import { runMain } from "../src/cli/main.ts";
import { UhpEngine } from "../src/uhp/engine.ts";
import { runUhpLoop } from "../src/uhp/loop.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task uhp",
    "A Universal Hive Protocol engine on stdin/stdout (info, newgame, play, pass, validmoves,\n" +
      "bestmove, undo, options, perft). Every reply ends with `ok`; `exit` or end of input quits.",
    {},
  );
  if (!args) return;
  const encoder = new TextEncoder();
  const writer = Deno.stdout.writable.getWriter();
  await runUhpLoop(
    new UhpEngine(),
    Deno.stdin.readable,
    (text) => writer.write(encoder.encode(text)),
  );
  await writer.close().catch(() => {});
});

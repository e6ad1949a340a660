// The UHP engine as a process: a scripted exchange over real stdin/stdout, and fuzzed input.
import assert from "node:assert/strict";
import { UhpEngine } from "../../src/uhp/engine.ts";
import { runUhpLoop } from "../../src/uhp/loop.ts";
import { xorshift32 } from "../helpers/prng.ts";
import { randomGame } from "../../src/hive/playout.ts";

const TASK = new URL("../../tasks/uhp.ts", import.meta.url).pathname;

async function runProcess(input: Uint8Array): Promise<{ code: number; out: string; err: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TASK],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(input);
  await w.close();
  const { code, stdout, stderr } = await child.output();
  return { code, out: new TextDecoder().decode(stdout), err: new TextDecoder().decode(stderr) };
}

Deno.test("uhp process: scripted exchange over stdin/stdout", async () => {
  const script = [
    "newgame Base+P",
    "play wS1",
    "play bP -wS1",
    "play wQ wS1-",
    "play bQ \\bP",
    "validmoves",
    "undo 2",
    "play wQ wS1/",
    "options get BestMoveDepth",
    "bogus",
    "exit",
    "info", // never reached: exit stops the loop
  ].join("\r\n") + "\n";
  const { code, out } = await runProcess(new TextEncoder().encode(script));
  assert.equal(code, 0);
  const replies = out.trimEnd().split("\nok\n").map((r) => r.replace(/\nok$/, ""));
  // A fresh checkout's engine loads the shipped network (models/hive-default.kbhz): info names it.
  assert.match(replies[0], /^id Kibitz 0\.1\.0 \(MCTS, model .+\)\nMosquito;Ladybug;Pillbug$/);
  assert.deepEqual(replies.slice(1, 5), [
    "Base+P;NotStarted;White[1]",
    "Base+P;InProgress;Black[1];wS1",
    "Base+P;InProgress;White[2];wS1;bP -wS1",
    "Base+P;InProgress;Black[2];wS1;bP -wS1;wQ wS1-",
  ]);
  assert.equal(replies[5], "Base+P;InProgress;White[3];wS1;bP -wS1;wQ wS1-;bQ \\bP");
  const valid = replies[6].split(";");
  assert.ok(valid.length > 10 && valid.every((m) => m.startsWith("w")), replies[6]);
  assert.equal(replies[7], "Base+P;InProgress;White[2];wS1;bP -wS1");
  assert.equal(replies[8], "Base+P;InProgress;Black[2];wS1;bP -wS1;wQ wS1/");
  assert.equal(replies[9], "BestMoveDepth;int;2;2;1;12");
  assert.equal(replies[10], "err Invalid command. Try 'help' to see a list of valid commands.");
  assert.equal(replies.length, 11);
});

Deno.test("uhp process: random bytes never kill the engine", async () => {
  const rand = xorshift32(0xdecaf);
  const bytes = new Uint8Array(4000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rand() * 256);
  const tail = new TextEncoder().encode("\ninfo\nexit\n");
  const input = new Uint8Array(bytes.length + tail.length);
  input.set(bytes);
  input.set(tail, bytes.length);
  const { code, out, err } = await runProcess(input);
  assert.equal(code, 0, err);
  assert.match(out, /id Kibitz 0\.1\.0[^\n]*\nMosquito;Ladybug;Pillbug\nok\n$/);
});

const VOCAB = [
  "newgame",
  "newgame Base+MLP",
  "newgame Base+ML;InProgress;White[2];wS1;bM wS1-",
  "play wS1",
  "play bG1 -wS1",
  "play wQ wS1/",
  "play bM wS1\\",
  "play wB1 bG1",
  "play pass",
  "pass",
  "validmoves",
  "bestmove depth 1",
  "undo",
  "undo 2",
  "options",
  "options set BestMoveDepth 1",
  "perft 1",
  "perft 2",
  "info",
  "help",
];
const NOISE = " ;:/\\-+[]wbQSBGAMLPqsbgamlp\t\u00e9\u{1f41d}\0";

Deno.test("uhp loop fuzz: every command line gets exactly one reply ending in ok", async () => {
  const rand = xorshift32(12345);
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) {
    let line = VOCAB[Math.floor(rand() * VOCAB.length)];
    const r = rand();
    if (r < 0.3) line = line.slice(0, Math.floor(rand() * line.length));
    else if (r < 0.6) {
      const at = Math.floor(rand() * (line.length + 1));
      line = line.slice(0, at) + NOISE[Math.floor(rand() * NOISE.length)] + line.slice(at);
    } else if (r < 0.7) {
      line = Array.from(
        { length: Math.floor(rand() * 40) },
        () => String.fromCharCode(1 + Math.floor(rand() * 0x2ff)),
      ).join("").replace(/[\r\n]/g, "");
    }
    lines.push(line);
  }
  const commands = lines.filter((l) => l.trim() !== "" && l.trim().toLowerCase() !== "exit");
  const data = new TextEncoder().encode(lines.join("\n") + "\n");
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      // Odd chunk sizes split lines and multi-byte characters across reads.
      for (let i = 0; i < data.length; i += 97) c.enqueue(data.subarray(i, i + 97));
      c.close();
    },
  });
  let out = "";
  await runUhpLoop(new UhpEngine(), input, (t) => {
    out += t;
    return Promise.resolve();
  });
  const stop = lines.findIndex((l) => l.trim().toLowerCase() === "exit");
  const expected = stop < 0 ? commands.length : lines.slice(0, stop).filter((l) => l.trim() !== "")
    .length;
  const oks = out.split("\n").filter((l) => l === "ok").length;
  assert.equal(oks, expected + 1, "one ok per command plus the start-up info");
  assert.ok(out.endsWith("ok\n"));
  assert.ok(!/^error/m.test(out));
});

Deno.test("uhp loop: a deep bestmove and a deep perft each answer within their caps, then the loop goes on", async () => {
  const g = randomGame("Base+MLP", 30, 3);
  const script = [
    `newgame ${g.gameString()}`,
    "options set BestMoveMaxTime 1",
    "options set PerftMaxTime 1",
    "bestmove depth 50",
    "perft 6",
    "info",
  ].join("\n") + "\n";
  const data = new TextEncoder().encode(script);
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(data);
      c.close();
    },
  });
  const at: number[] = [];
  let out = "";
  const t0 = performance.now();
  await runUhpLoop(new UhpEngine(), input, (t) => {
    out += t;
    at.push(performance.now() - t0);
    return Promise.resolve();
  });
  const replies = out.split("\nok\n").slice(0, -1);
  assert.equal(replies.length, 7, out); // start-up info + six commands
  assert.ok(g.isValid(g.parseMove(replies[4])), `bestmove: ${replies[4]}`);
  assert.match(replies[5], /^err perft 6 stopped after 1 s/);
  assert.match(replies[6], /^id Kibitz/);
  // Two one-second caps; the slack is for a loaded machine, not for a search that ignores time.
  assert.ok(at[at.length - 1] < 8000, `the last reply came after ${at[at.length - 1]} ms`);
});

// Every task, given an output it cannot write or an input that is not there (or a bad argument
// where it has neither), prints `error: <what>: <why>` naming the argument or file, exits 2 for
// bad input or 1 for the environment, and never prints a stack trace.
import { equal, ok } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;
const tasks = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks as Record<string, string>;

interface Case {
  task: string;
  args: string[];
  /** Exit statuses accepted (2: bad input, 1: environment). */
  status: number[];
  /** Text the first line must contain (the argument or the file). */
  names: string;
}

async function run(c: Case, env: Record<string, string> = {}) {
  const script = tasks[c.task].split(" ").pop()!;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}${script}`, ...c.args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env,
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

function checkStyle(c: Case, r: { code: number; stderr: string }): void {
  const what = `${c.task} ${c.args.join(" ")}`;
  const lines = r.stderr.split("\n").filter((l) => l.trim() !== "");
  const first = lines.find((l) => l.startsWith("error: "));
  ok(first, `${what}: no "error:" line in\n${r.stderr}`);
  ok(/^error: \S.*: \S/.test(first), `${what}: not "error: <what>: <why>": ${first}`);
  ok(first.includes(c.names), `${what}: the error does not name ${c.names}: ${first}`);
  ok(!lines.some((l) => /^\s+at /.test(l)), `${what}: a stack trace\n${r.stderr}`);
  ok(c.status.includes(r.code), `${what}: exit ${r.code}, expected ${c.status}\n${r.stderr}`);
}

async function inParallel<T>(items: T[], n: number, f: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await f(items[next++]);
  }));
}

Deno.test("tasks: unwritable outputs, missing inputs and bad arguments give one error style", async () => {
  const dir = await Deno.makeTempDir();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    // A file where a folder must be: unwritable for every user, root included.
    const blocker = `${dir}/blocker`;
    Deno.writeTextFileSync(blocker, "");
    const under = `${blocker}/sub`;
    const missing = `${dir}/missing`;
    const records = `${ROOT}tests/fixtures/sgf/records`;
    const spot = `${ROOT}tests/fixtures/poker/spot.toml`;
    const busy = String((listener.addr as Deno.NetAddr).port);
    const cases: Case[] = [
      // unwritable outputs
      {
        task: "ingest",
        args: [records, "--out", `${under}/g.jsonl`],
        status: [1, 2],
        names: under,
      },
      {
        task: "ingest",
        args: [records, "--out", `${dir}/g.jsonl`, "--pgn", blocker],
        status: [1, 2],
        names: "--pgn",
      },
      {
        task: "ingest",
        args: [records, "--out", `${dir}/g.jsonl`, "--rejects", `${under}/r`],
        status: [1, 2],
        names: "--rejects",
      },
      {
        task: "nn-train",
        args: ["--backend", "cpu", "--checkpoint", `${under}/c.ckpt`],
        status: [1, 2],
        names: "--checkpoint",
      },
      { task: "bench", args: ["quant", "--out", under], status: [1, 2], names: "--out" },
      { task: "bundle", args: ["--out", under], status: [1, 2], names: "--out" },
      {
        task: "solve",
        args: [spot, "--max-iterations", "1", "--out", under],
        status: [1, 2],
        names: under,
      },
      // missing inputs
      {
        task: "ingest",
        args: [`${missing}.sgf`, "--out", `${dir}/g.jsonl`],
        status: [2],
        names: `${missing}.sgf`,
      },
      { task: "solve", args: [`${missing}.toml`], status: [2], names: `${missing}.toml` },
      { task: "solve", args: ["--load", `${missing}.bin`], status: [2], names: `${missing}.bin` },
      {
        task: "browser-check",
        args: ["--chromium", `${missing}-chromium`],
        status: [2],
        names: "--chromium",
      },
      // bad arguments of tasks without files, and the cases of the issue
      { task: "az", args: ["nosuchgame"], status: [2], names: "nosuchgame" },
      {
        task: "selfplay",
        args: ["tictactoe", "--buffer", `${under}/b`],
        status: [1, 2],
        names: under,
      },
      { task: "eval", args: ["As Ks"], status: [2], names: "As Ks" },
      { task: "cfr", args: ["chess"], status: [2], names: "chess" },
      { task: "perft", args: ["Base", "x"], status: [2], names: "depth" },
      { task: "quant-demo", args: ["--elements", "-5"], status: [2], names: "--elements" },
      { task: "gpu-info", args: ["--no-such-flag"], status: [2], names: "no-such-flag" },
      { task: "uhp", args: ["--no-such-flag"], status: [2], names: "no-such-flag" },
      { task: "build-wasm", args: ["--no-such-flag"], status: [2], names: "no-such-flag" },
      { task: "uhp", args: ["--model", `${missing}.kbhz`], status: [2], names: `${missing}.kbhz` },
      { task: "hive-games", args: ["--games", "1"], status: [2], names: "--out" },
      {
        task: "hive-games",
        args: ["--dagger", `${missing}.kbhz`, "--out", `${dir}/d.jsonl`],
        status: [2],
        names: `${missing}.kbhz`,
      },
      {
        task: "hive-pretrain",
        args: ["--store", `${missing}.jsonl`, "--out", `${dir}/w.kbnn`],
        status: [2],
        names: `${missing}.jsonl`,
      },
      { task: "serve", args: ["--port", busy], status: [1], names: `--port ${busy}` },
      { task: "az", args: ["tictactoe", "--dir", under], status: [1, 2], names: under },
      {
        task: "selfplay",
        args: ["tictactoe", "--buffer", `${dir}/buf`, "--model", `${missing}.kbnn`],
        status: [2],
        names: `${missing}.kbnn`,
      },
      {
        task: "train",
        args: ["tictactoe", "--buffer", `${missing}-buf`, "--out", `${dir}/c.kbnn`],
        status: [2],
        names: `${missing}-buf`,
      },
      {
        task: "arena",
        args: [
          "tictactoe",
          "--candidate",
          `${missing}.kbnn`,
          "--best",
          `${missing}.kbnn`,
          "--log",
          `${dir}/a.jsonl`,
        ],
        status: [2],
        names: "--candidate",
      },
    ];
    // Every task of deno.json is exercised (demo is solve under another name).
    const covered = new Set(cases.map((c) => c.task));
    for (const t of Object.keys(tasks)) {
      if (["demo", "test", "check"].includes(t)) continue;
      ok(covered.has(t), `task ${t} has no error-style case`);
    }
    const failures: string[] = [];
    await inParallel(cases, 4, async (c) => {
      try {
        checkStyle(c, await run(c));
      } catch (e) {
        failures.push((e as Error).message);
      }
    });
    equal(failures.join("\n\n"), "");
    // Nothing was created beside the blocker by the failed runs that checked before working.
    equal(Deno.statSync(blocker).isFile, true);
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tasks: KIBITZ_DEBUG=1 adds the stack trace after the error line", async () => {
  const c: Case = { task: "eval", args: ["As Kx"], status: [2], names: "As Kx" };
  const r = await run(c, { KIBITZ_DEBUG: "1" });
  equal(r.code, 2);
  ok(r.stderr.startsWith("error: "), r.stderr);
  ok(/^\s+at /m.test(r.stderr), `no stack trace with KIBITZ_DEBUG=1:\n${r.stderr}`);
});

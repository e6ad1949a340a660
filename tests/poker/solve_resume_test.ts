import assert from "node:assert/strict";
import { decodeSave } from "../../src/poker/results.ts";
import { SMALL_TURN_SPOT, TURN_WS } from "../helpers/spots.ts";
import { interruptSolveTask, runSolveTask as run } from "../helpers/solve_task.ts";

// `deno task solve` writes checkpoint.bin on Ctrl-C (and with --keep-checkpoint at the end), and
// `--resume` continues from it: the results equal an uninterrupted solve's, strategy for strategy.

async function strategies(dir: string): Promise<Float32Array> {
  return decodeSave(await Deno.readFile(`${dir}/solve.bin`), dir).strategies;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("solve task: SIGTERM writes a checkpoint and --resume ends as an uninterrupted solve", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cfg = `${dir}/spot.toml`;
    await Deno.writeTextFile(
      cfg,
      `${SMALL_TURN_SPOT}[solver]\nthreads = 1\nregret_bits = 8\nstrategy_bits = 8\n` +
        `max_iterations = 1000\ntarget_exploitability_pct = 0\n`,
    );
    const whole = await run([cfg, "--out", `${dir}/whole`, "--json"]);
    assert.equal(whole.code, 0, whole.stderr);
    assert.ok(!(await exists(`${dir}/whole/checkpoint.bin`)));

    // SIGTERM, as a job scheduler stops a job, does what Ctrl-C does (solve_task_test).
    const cutRun = await interruptSolveTask(
      [cfg, "--out", `${dir}/cut`, "--every", "1", "--json"],
      "SIGTERM",
    );
    const err = cutRun.stderr;
    assert.equal(cutRun.code, 0, err);
    const cut = JSON.parse(cutRun.stdout).iterations;
    assert.ok(cut >= 1 && cut < 1000, `${cut}`);
    assert.match(err, /solve: stopping after this iteration/);
    assert.match(err, new RegExp(`checkpoint: .*checkpoint\\.bin \\(iteration ${cut};`));

    // A new solve into that folder says it would replace the checkpoint (checked, not solved).
    const notice = await run([cfg, "--out", `${dir}/cut`, "--node", "Nope"]);
    assert.equal(notice.code, 2);
    assert.match(
      notice.stdout,
      new RegExp(
        `note: .*cut/checkpoint\\.bin holds a solve stopped at iteration ${cut} \\(written .*\\); this solve's checkpoints replace it`,
      ),
    );
    // Results go to the checkpoint's folder; the checkpoint is gone once the solve finishes.
    const resumed = await run(["--resume", `${dir}/cut/checkpoint.bin`, "--json"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, new RegExp(`resuming the solve at iteration ${cut} `));
    assert.match(resumed.stderr, /max_iterations 1000, target 0% of the pot/);
    assert.match(resumed.stderr, /removed .*checkpoint\.bin: the solve finished/);
    assert.ok(!(await exists(`${dir}/cut/checkpoint.bin`)));
    assert.deepEqual(JSON.parse(resumed.stdout), JSON.parse(whole.stdout));
    assert.deepEqual(await strategies(`${dir}/cut`), await strategies(`${dir}/whole`));
    const meta = JSON.parse(await Deno.readTextFile(`${dir}/cut/result.json`)).meta;
    assert.equal(meta.iterations, 1000);
    assert.equal(meta.config, await Deno.readTextFile(cfg));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("solve task: a warm start's full tree continues from --keep-checkpoint with a higher limit", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // The value-based warm start with W = 40 moves the average's resets to t >= 160: the resumed
    // solve must keep that (with the default it would reset at t = 64, between 60 and 80).
    const cfg = `${dir}/spot.toml`;
    await Deno.writeTextFile(
      cfg,
      TURN_WS.replace('warmstart_method = "regrets"', 'warmstart_method = "values"')
        .replace("warmstart_weight = 10", "warmstart_weight = 40")
        .replace("target_exploitability_pct = 0.5", "target_exploitability_pct = 0"),
    );
    const whole = await run([cfg, "--out", `${dir}/whole`, "--json"]);
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(whole.stderr, /average resets from t = 160; continuing at iteration 40/);

    const first = await run([
      cfg,
      "--out",
      `${dir}/part`,
      "--max-iterations",
      "20",
      "--keep-checkpoint",
    ]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /checkpoint: .*checkpoint\.bin \(iteration 60;/);
    const none = await run(["--resume", `${dir}/part/checkpoint.bin`]);
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /is at iteration 60, where max_iterations = 20 ends \(the full tree's own iterations, counted from 40\): give --max-iterations above 20/,
    );
    // The output folder names its checkpoint too.
    const second = await run([
      "--resume",
      `${dir}/part/`,
      "--max-iterations",
      "40",
      "--json",
    ]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /resuming the solve at iteration 60 /);
    assert.match(
      second.stderr,
      /phase 3 resumed: the full tree, warm-started \("values", W = 40\)/,
    );
    assert.doesNotMatch(second.stderr, /phase 1:/);
    assert.deepEqual(JSON.parse(second.stdout), JSON.parse(whole.stdout));
    assert.deepEqual(await strategies(`${dir}/part`), await strategies(`${dir}/whole`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("solve task: --resume refuses a config file, --load, a missing file and a solve.bin", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const withConfig = await run(["--resume", `${dir}/checkpoint.bin`, `${dir}/spot.toml`]);
    assert.equal(withConfig.code, 2);
    assert.match(withConfig.stderr, /--resume .* continues a solve with its own config; leave out/);
    const both = await run(["--resume", `${dir}/checkpoint.bin`, "--load", `${dir}/solve.bin`]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give one of them/);
    const missing = await run(["--resume", `${dir}/checkpoint.bin`]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot open the checkpoint .*checkpoint\.bin/);
    await Deno.writeFile(`${dir}/solve.bin`, new TextEncoder().encode("KBZSOLVE" + " ".repeat(40)));
    const save = await run(["--resume", `${dir}/solve.bin`]);
    assert.equal(save.code, 2);
    assert.match(save.stderr, /solve\.bin: a solve\.bin holds a solve's results .* not the state/);
    await Deno.writeFile(`${dir}/other.bin`, new TextEncoder().encode("KBZOTHER" + " ".repeat(40)));
    const other = await run(["--resume", `${dir}/other.bin`]);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /other\.bin: not a Kibitz solve checkpoint \(no KBZCHKPT header\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

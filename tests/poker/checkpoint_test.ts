import assert from "node:assert/strict";
import { solverStateViews } from "../../src/cfr/solver_state.ts";
import type { CfrSolver } from "../../src/cfr/solver.ts";
import { isKibitzError } from "../../src/errors.ts";
import { getGpu } from "../../src/gpu/device.ts";
import {
  type CheckpointSettings,
  checkpointSink,
  openCheckpoint,
} from "../../src/poker/checkpoint.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { prepareSpot, type RunOptions, runSolve } from "../../src/poker/solve.ts";
import { riverSpot, SMALL_TURN_SPOT, TURN_WS } from "../helpers/spots.ts";
import { warmStartRunner } from "../../src/poker/warmstart_solve.ts";

// A solve stopped at a check and continued from its checkpoint in a new solver ends with the stores
// an uninterrupted solve ends with, bit for bit: counters, discount and store bytes are the whole
// state, for every path the CPU engine takes (the Wasm walk on one thread and on two, f32 and
// quantized stores with stochastic rounding, PDCFR+'s prediction store, the TypeScript walk that
// pruning takes, on one thread and on two).

const CPU = { backend: "cpu" as const, reason: "test" };
const gpu = await getGpu();

function spotOf(solver: string, iterations: number, spot = SMALL_TURN_SPOT) {
  const config = parseSolveConfig(
    `${spot}[solver]\n${solver}\nmax_iterations = ${iterations}\n` +
      `target_exploitability_pct = 0\n`,
  );
  return { config, spot: prepareSpot(config) };
}

function bytesOf(solver: CfrSolver): Uint8Array {
  const views = solverStateViews(solver);
  const out = new Uint8Array(views.reduce((n, v) => n + v.length, 0));
  let at = 0;
  for (const v of views) out.set(v, at), at += v.length;
  return out;
}

function settings(path: string, info: string[] = []): CheckpointSettings {
  return {
    path,
    config: "test",
    limits: { maxIterations: 30, targetPct: 0 },
    minutes: 0,
    keep: false,
    info: (l) => info.push(l),
  };
}

const CASES = [
  "threads = 1",
  "threads = 1\nregret_bits = 8\nstrategy_bits = 4",
  "threads = 2\nregret_bits = 16\nstrategy_bits = 8",
  'threads = 1\nalgorithm = "pdcfr+"\nregret_bits = 8\nstrategy_bits = 8',
  "threads = 1\nenable_pruning = true\nregret_bits = 16",
  // The TypeScript walk on worker threads (pruning is not on the Wasm walk): stores in shared memory.
  "threads = 2\nenable_pruning = true\nregret_bits = 8\nstrategy_bits = 8",
];

for (const solver of CASES) {
  Deno.test(`a solve continued from its checkpoint ends as an uninterrupted one (${solver.replaceAll("\n", ", ")})`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const opts: RunOptions = { every: 10, checkEvery: true, backend: CPU };
      const whole = await runSolve(spotOf(solver, 30).spot, opts);
      assert.equal(whole.iterations, 30);

      // Stopped (Ctrl-C) after the check at iteration 10: the sink writes a checkpoint there.
      const path = `${dir}/checkpoint.bin`;
      const lines: string[] = [];
      let checks = 0;
      const cut = await runSolve(spotOf(solver, 30).spot, {
        ...opts,
        onProgress: () => checks++,
        shouldStop: () => checks >= 1,
        checkpoint: checkpointSink(settings(path, lines), "solve"),
      });
      assert.equal(cut.stoppedBy, "interrupted");
      assert.equal(cut.iterations, 10);
      assert.match(lines.join("\n"), /checkpoint: .*checkpoint\.bin \(iteration 10;/);

      const opened = await openCheckpoint(path);
      assert.equal(opened.header.state.iteration, 10);
      assert.equal(opened.header.gridFrom, 0);
      const seen: number[] = [];
      const resumed = await runSolve(spotOf(solver, 30).spot, {
        ...opts,
        restore: opened.restore,
        carry: { seconds: 5, reached: {}, gridFrom: opened.header.gridFrom },
        onProgress: (p) => seen.push(p.iteration),
      });
      assert.deepEqual(seen, [20, 30]);
      assert.equal(resumed.iterations, 30);
      assert.ok(resumed.seconds >= 5);
      assert.deepEqual(bytesOf(resumed.solver), bytesOf(whole.solver));
      assert.equal(resumed.exploitability.percent, whole.exploitability.percent);
      // The checkpoint is not a copy of the final state: a solver that skipped the restore differs.
      const cold = await runSolve(spotOf(solver, 20).spot, opts);
      assert.notDeepEqual(bytesOf(cold.solver), bytesOf(whole.solver));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test({
  name: "a GPU solve checkpoints and continues on the device as an uninterrupted one",
  ignore: gpu === null,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const GPU = { backend: "gpu" as const, reason: "test", ctx: gpu! };
      const solver = "threads = 1\nregret_bits = 8\nstrategy_bits = 8";
      const opts: RunOptions = { every: 10, checkEvery: true, backend: GPU };
      // A river spot: the device's kernels for a turn tree take llvmpipe half a minute to build.
      const river = riverSpot("50%, a", "2.5x");
      const whole = await runSolve(spotOf(solver, 40, river).spot, opts);
      const path = `${dir}/checkpoint.bin`;
      let checks = 0;
      const cut = await runSolve(spotOf(solver, 40, river).spot, {
        ...opts,
        onProgress: () => checks++,
        shouldStop: () => checks >= 1,
        checkpoint: checkpointSink(settings(path), "solve"),
      });
      assert.equal(cut.stoppedBy, "interrupted");
      const opened = await openCheckpoint(path);
      // Checks are pipelined: the stop comes a chunk after the first check, on the grid.
      assert.equal(opened.header.state.iteration, cut.iterations);
      assert.ok(cut.iterations % 10 === 0 && cut.iterations < 40, `${cut.iterations}`);
      const resumed = await runSolve(spotOf(solver, 40, river).spot, {
        ...opts,
        restore: opened.restore,
        carry: { seconds: 0, reached: {}, gridFrom: 0 },
      });
      assert.equal(resumed.iterations, 40);
      assert.deepEqual(bytesOf(resumed.solver), bytesOf(whole.solver));

      // A periodic checkpoint, written while the device solves: the stores as of its iteration.
      const periodic = `${dir}/periodic.bin`;
      await runSolve(spotOf(solver, 30, river).spot, {
        ...opts,
        checkpoint: checkpointSink({ ...settings(periodic), minutes: 1e-9 }, "solve"),
      });
      const mid = await openCheckpoint(periodic);
      assert.ok(mid.header.state.iteration > 0 && mid.header.state.iteration < 30);
      const fromMid = await runSolve(spotOf(solver, 40, river).spot, {
        ...opts,
        restore: mid.restore,
        carry: { seconds: 0, reached: {}, gridFrom: 0 },
      });
      assert.deepEqual(bytesOf(fromMid.solver), bytesOf(whole.solver));

      // The same file continues on the CPU (--resume --backend cpu): one format for both backends,
      // and the solve goes on from where the device left it (rounding apart, as the GPU's).
      const seen: number[] = [];
      const onCpu = await runSolve(spotOf(solver, 40, river).spot, {
        ...opts,
        backend: CPU,
        restore: mid.restore,
        carry: { seconds: 0, reached: {}, gridFrom: 0 },
        onProgress: (p) => seen.push(p.iteration),
      });
      assert.equal(seen[0], mid.header.state.iteration + 10);
      // A cold CPU start over the same iterations (the restore ignored) is far worse.
      const cold = await runSolve(spotOf(solver, 40 - mid.header.state.iteration, river).spot, {
        ...opts,
        backend: CPU,
      });
      const [got, gpuPct, coldPct] = [onCpu, whole, cold].map((r) => r.exploitability.percent);
      assert.ok(
        Math.abs(got - gpuPct) < 0.1 * Math.abs(coldPct - gpuPct),
        `${got} ${gpuPct} ${coldPct}`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("periodic checkpoints: after each chunk once the interval has passed (checks skipped or not), none with minutes = 0", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/checkpoint.bin`;
    const lines: string[] = [];
    const s = { ...settings(path, lines), minutes: 1e-9 };
    const r = await runSolve(spotOf("threads = 1", 30).spot, {
      every: 10,
      checkEvery: true,
      backend: CPU,
      checkpoint: checkpointSink(s, "solve"),
    });
    assert.equal(r.stoppedBy, "max_iterations");
    // After the checks at 10 and 20 (the one at 30 ends the solve; keep is off).
    assert.equal(lines.filter((l) => l.startsWith("checkpoint:")).length, 2, lines.join("\n"));
    assert.equal((await openCheckpoint(path)).header.state.iteration, 20);
    await Deno.remove(path);
    // Checks skipped by the predicted schedule (a target far below): checkpoints still come after
    // every chunk once due.
    const sparse: string[] = [], checked: number[] = [];
    const far = spotOf("threads = 1", 60).spot;
    far.config.solver.targetExploitabilityPct = 1e-4;
    await runSolve(far, {
      every: 10,
      backend: CPU,
      onProgress: (p) => checked.push(p.iteration),
      checkpoint: checkpointSink({ ...settings(path, sparse), minutes: 1e-9 }, "solve"),
    });
    assert.ok(checked.length < 5, `checks at ${checked}`);
    assert.deepEqual(sparse.map((l) => Number(/iteration (\d+)/.exec(l)![1])), [
      10,
      20,
      30,
      40,
      50,
    ]);
    await Deno.remove(path);
    const none: string[] = [];
    await runSolve(spotOf("threads = 1", 30).spot, {
      every: 10,
      backend: CPU,
      checkpoint: checkpointSink(settings(path, none), "solve"),
    });
    assert.deepEqual(none, []);
    await assert.rejects(Deno.stat(path));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a checkpoint that cannot be written is reported and the solve goes on", async () => {
  const lines: string[] = [];
  const s = { ...settings("/nonexistent-dir/x/checkpoint.bin", lines), minutes: 1e-9 };
  const r = await runSolve(spotOf("threads = 1", 20).spot, {
    every: 10,
    checkEvery: true,
    backend: CPU,
    checkpoint: checkpointSink(s, "solve"),
  });
  assert.equal(r.iterations, 20);
  assert.match(lines.join("\n"), /warning: checkpoint not written: cannot write the checkpoint/);
});

Deno.test("damaged checkpoints are refused by name: magic, version, truncation, checksum, shape", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/checkpoint.bin`;
    await runSolve(spotOf("threads = 1\nregret_bits = 16", 10).spot, {
      every: 10,
      backend: CPU,
      checkpoint: checkpointSink({ ...settings(path), keep: true }, "solve"),
    });
    const good = await Deno.readFile(path);
    const expectCode = async (bytes: Uint8Array, code: string, re: RegExp, solver = "") => {
      const p = `${dir}/bad.bin`;
      await Deno.writeFile(p, bytes);
      const err = await (async () => {
        const o = await openCheckpoint(p);
        await runSolve(spotOf(solver || "threads = 1\nregret_bits = 16", 20).spot, {
          backend: CPU,
          restore: o.restore,
        });
      })().then(() => null, (e) => e);
      assert.ok(isKibitzError(err), `${code}: ${err}`);
      assert.equal(err.code, code, err.message);
      assert.match(err.message, re);
      assert.ok(err.message.includes(p), err.message);
    };
    const magic = good.slice();
    magic[0] = 0x41;
    await expectCode(magic, "bad_checkpoint", /not a Kibitz solve checkpoint/);
    const version = good.slice();
    new DataView(version.buffer).setUint32(8, 99, true);
    await expectCode(version, "checkpoint_version", /version 99; this Kibitz reads version 1/);
    await expectCode(good.slice(0, good.length - 100), "checkpoint_truncated", /cut short/);
    await expectCode(good.slice(0, 12), "checkpoint_truncated", /shorter than its header/);
    const flipped = good.slice();
    flipped[good.length - 200] ^= 1;
    await expectCode(flipped, "checkpoint_checksum", /checksum mismatch/);
    await expectCode(
      good,
      "shape_mismatch",
      /regrets store has format i16, this solve's has i8/,
      "threads = 1\nregret_bits = 8",
    );
    const json = good.slice();
    json[16] = 0x78; // the header's opening "{"
    await expectCode(json, "bad_checkpoint", /header is not valid JSON/);
    // The good file restores.
    const ok = await runSolve(spotOf("threads = 1\nregret_bits = 16", 20).spot, {
      backend: CPU,
      restore: (await openCheckpoint(path)).restore,
    });
    assert.equal(ok.iterations, 20);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a warm start resumes its small tree from a phase-1 checkpoint and ends as uninterrupted", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const text = TURN_WS.replace(
      "target_exploitability_pct = 0.5",
      "target_exploitability_pct = 0",
    );
    const opts: RunOptions = { every: 5, checkEvery: true, backend: CPU };
    const whole = await warmStartRunner(prepareSpot(parseSolveConfig(text)), () => {})(opts);

    // Checkpoints at every check; the first one of the small tree is kept aside.
    const path = `${dir}/checkpoint.bin`, small = `${dir}/small.bin`;
    const s: CheckpointSettings = {
      ...settings(path),
      minutes: 1e-9,
      info: (l) => {
        if (/small tree, iteration 5;/.test(l)) Deno.copyFileSync(path, small);
      },
    };
    await warmStartRunner(prepareSpot(parseSolveConfig(text)), () => {}, {
      settings: s,
    })(opts);
    const opened = await openCheckpoint(small);
    assert.equal(opened.header.phase, "small");
    assert.equal(opened.header.state.iteration, 5);
    const lines: string[] = [], seen: number[] = [];
    const resumed = await warmStartRunner(
      prepareSpot(parseSolveConfig(text)),
      (l) => lines.push(l),
      { resume: opened },
    )({ ...opts, onProgress: (p) => seen.push(p.iteration) });
    // The small tree continued from 5 (not from 0), then the full tree ran from W = 10.
    assert.deepEqual(seen.slice(0, 4), [10, 15, 20, 15]);
    assert.match(lines.join("\n"), /phase 1 done: 20 iterations/);
    assert.equal(resumed.iterations, whole.iterations);
    assert.deepEqual(bytesOf(resumed.solver), bytesOf(whole.solver));
    // A plain solve's checkpoint does not continue a warm start, nor the reverse.
    const plain = await openCheckpoint(small);
    plain.header.phase = "solve";
    assert.throws(
      () => warmStartRunner(prepareSpot(parseSolveConfig(text)), () => {}, { resume: plain }),
      /written by a plain solve, but its config warm starts/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stop between checks ends the chunk at once; its checkpoint continues as uninterrupted", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const solver = "threads = 1\nregret_bits = 8\nstrategy_bits = 8";
    // One chunk of 300 iterations (a check only at its end), about 1.5 ms each here: the solve
    // yields every 50 ms, where the stop is seen.
    const opts: RunOptions = { every: 300, backend: CPU };
    const whole = await runSolve(spotOf(solver, 300).spot, opts);
    const path = `${dir}/checkpoint.bin`;
    const cut = await runSolve(spotOf(solver, 300).spot, {
      ...opts,
      shouldStop: () => true,
      checkpoint: checkpointSink(settings(path), "solve"),
    });
    assert.equal(cut.stoppedBy, "interrupted");
    assert.ok(cut.iterations > 0 && cut.iterations < 300, `${cut.iterations}`);
    const opened = await openCheckpoint(path);
    assert.equal(opened.header.state.iteration, cut.iterations);
    const resumed = await runSolve(spotOf(solver, 300).spot, {
      ...opts,
      restore: opened.restore,
      carry: { seconds: 0, reached: {}, gridFrom: opened.header.gridFrom },
    });
    assert.equal(resumed.iterations, 300);
    assert.deepEqual(bytesOf(resumed.solver), bytesOf(whole.solver));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

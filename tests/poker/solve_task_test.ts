import assert from "node:assert/strict";
import { hardwareGpuAbsent } from "../../src/gpu/hardware_nodes.ts";
import { interruptSolveTask, runSolveTask as run } from "../helpers/solve_task.ts";

const CONFIG = `
[ranges]
oop = "KsKc,6c5d"
ip = "JcJd"
[cards]
flop = "Kh Qd 7c"
turn = "4s"
river = "2h"
[tree]
starting_pot = 100
effective_stack = 1000
add_allin_threshold = 0
[bet_sizes.river]
oop_bet = "100%"
oop_raise = ""
ip_bet = ""
ip_raise = ""
[solver]
max_iterations = 400
target_exploitability_pct = 0.3
`;

Deno.test("solve task: --json, result files, --load and --max-memory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cfg = `${dir}/spot.toml`;
    await Deno.writeTextFile(cfg, CONFIG);
    const r = await run([cfg, "--json", "--out", `${dir}/out`]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(j).sort(), [
      "exploitability_pct",
      "iterations",
      "memory_bytes",
      "root",
    ]);
    assert.deepEqual(j.root.actions, ["Check", "Bet 100"]);
    assert.ok(j.exploitability_pct <= 0.3);
    // Value bets always, bluffs half the time: overall bet frequency (1 + 0.5) / 2.
    assert.ok(Math.abs(j.root.frequencies[1] - 0.75) < 0.03, `${j.root.frequencies}`);
    assert.ok(Math.abs(j.root.ev[0] + j.root.ev[1] - 100) < 1e-3);
    assert.match(r.stderr, /memory estimate/);
    if (hardwareGpuAbsent()) {
      // auto on a machine with no hardware GPU: no probe, so no driver in memory or estimate.
      assert.match(r.stderr, /auto: no GPU device node: .* \(the WebGPU driver is not loaded\)/);
      assert.doesNotMatch(r.stderr, /WebGPU driver \d/);
    } else assert.match(r.stderr, /memory estimate: .*WebGPU driver 64\.0 MB/);
    assert.match(r.stderr, /solve: it 10 .*exploitability/);
    const result = JSON.parse(await Deno.readTextFile(`${dir}/out/result.json`));
    assert.equal(result.meta.iterations, j.iterations);
    assert.deepEqual(result.nodes[0].actions, ["Check", "Bet 100"]);
    assert.equal(Object.keys(result.nodes[0].strategy).length, 2);

    const loaded = await run(["--load", `${dir}/out/solve.bin`, "--json"]);
    assert.equal(loaded.code, 0, loaded.stderr);
    const lj = JSON.parse(loaded.stdout);
    assert.deepEqual(lj.root.frequencies, j.root.frequencies);
    assert.deepEqual(lj.root.ev, j.root.ev);

    const at = await run(["--load", `${dir}/out/solve.bin`, "--json", "--node", "Bet 100"]);
    assert.equal(at.code, 0, at.stderr);
    const node = JSON.parse(at.stdout).node;
    assert.deepEqual([node.path, node.player, node.actions], [["Bet 100"], "ip", ["Fold", "Call"]]);
    assert.ok(Math.abs(node.frequencies[1] - 0.5) < 0.05, `${node.frequencies}`);
    const missing = await run(["--load", `${dir}/out/solve.bin`, "--node", "Bet 50"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--node "Bet 50": no child "Bet 50"/);

    const human = await run(["--load", `${dir}/out/solve.bin`]);
    assert.match(human.stdout, /root \(OOP\): Check .*%, Bet 100 .*%/);
    assert.match(human.stdout, /bet\/raise frequency/);

    const refused = await run([cfg, "--max-memory", "100"]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^error: the solve needs about .* above --max-memory 100 B/);

    await Deno.writeTextFile(cfg, CONFIG.replace("starting_pot", "pot"));
    const bad = await run([cfg]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown key "tree\.pot"; valid keys in \[tree\]: starting_pot/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("solve task: Ctrl-C stops cleanly and still writes the results", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await interruptSolveTask(["--out", dir, "--every", "1", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.ok(j.iterations >= 1 && j.iterations < 300, `${j.iterations}`);
    const result = JSON.parse(await Deno.readTextFile(`${dir}/result.json`));
    assert.equal(result.meta.stopped_by, "interrupted");
    assert.ok((await Deno.stat(`${dir}/solve.bin`)).size > 1000);
    assert.match(r.stderr, /checkpoint: .*checkpoint\.bin \(iteration \d+; continue with --resume/);
    assert.ok((await Deno.stat(`${dir}/checkpoint.bin`)).size > 1000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("solve task: bad --out, --node and --load with a config fail before the solve", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cfg = `${dir}/spot.toml`;
    await Deno.writeTextFile(cfg, CONFIG);
    await Deno.writeTextFile(`${dir}/file`, "x");
    const asFile = await run([cfg, "--out", `${dir}/file`]);
    assert.equal(asFile.code, 2);
    assert.match(asFile.stderr, /^error: output directory .*\/file: exists and is not a directory/);
    assert.doesNotMatch(asFile.stdout + asFile.stderr, /solve: it|spot:/);

    const badNode = await run([cfg, "--out", `${dir}/out`, "--node", "Check,Bet 50"]);
    assert.equal(badNode.code, 2);
    assert.match(
      badNode.stderr,
      /^error: --node "Check,Bet 50": no child "Bet 50" after \[Check\]/,
    );
    assert.doesNotMatch(badNode.stdout + badNode.stderr, /solve: it/);

    const ok = await run([cfg, "--out", `${dir}/out`, "--max-iterations", "20"]);
    assert.equal(ok.code, 0, ok.stderr);
    const both = await run(["--load", `${dir}/out/solve.bin`, cfg]);
    assert.equal(both.code, 2);
    assert.match(
      both.stderr,
      /^error: --load .*solve\.bin reopens a saved solve .*leave out the config/,
    );

    const bytes = await Deno.readFile(`${dir}/out/solve.bin`);
    bytes[bytes.length - 8] ^= 1;
    await Deno.writeFile(`${dir}/bad.bin`, bytes);
    const corrupt = await run(["--load", `${dir}/bad.bin`]);
    assert.equal(corrupt.code, 2);
    assert.match(corrupt.stderr, /^error: .*bad\.bin: checksum mismatch/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

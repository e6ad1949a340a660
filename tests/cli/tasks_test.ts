import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";

/** Runs a task script with Deno and returns its exit code and output. */
async function runTask(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  });
  const r = await cmd.output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

Deno.test("task gpu-info: the adapter and a passing self-test as JSON, or a clear no-adapter error", async () => {
  // The GPU is optional: without an adapter (or with KIBITZ_NO_GPU=1) the task must say so cleanly.
  const hasAdapter = (await getGpu()) !== null;
  const r = await runTask("tasks/gpu_info.ts", ["--json"]);
  if (!hasAdapter) {
    assert.notEqual(r.code, 0);
    assert.match(r.err, /^error: .*(no WebGPU adapter|no adapter found)/m);
    assert.doesNotMatch(r.err, /^\s+at /m, "no stack trace");
    return;
  }
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.selfTest.ok, true);
  assert.equal(typeof j.adapter.description, "string");
  assert.ok(j.adapter.limits.maxStorageBufferBindingSize > 0);
});

Deno.test("task gpu-info with KIBITZ_NO_GPU=1: the no-adapter path is a clear error", async () => {
  const r = await runTask("tasks/gpu_info.ts", ["--json"], { KIBITZ_NO_GPU: "1" });
  assert.notEqual(r.code, 0);
  assert.match(r.err, /^error: .*(no WebGPU adapter|no adapter found)/m);
  assert.equal(r.out, "");
  // And a CPU task still runs.
  const cpu = await runTask("tasks/quant_demo.ts", ["--backend", "auto", "--elements", "1024"], {
    KIBITZ_NO_GPU: "1",
  });
  assert.equal(cpu.code, 0, cpu.err);
});

Deno.test("task quant-demo: runs on the CPU backend and prints every format", async () => {
  const r = await runTask("tasks/quant_demo.ts", ["--backend", "cpu", "--elements", "4096"]);
  assert.equal(r.code, 0, r.err);
  for (const f of ["f32", "i16", "u16", "i8", "u8", "i4", "u4"]) {
    assert.match(r.out, new RegExp(`^${f} `, "m"));
  }
});

Deno.test("tasks: --help prints usage, bad flags and values are clear errors", async () => {
  const help = await runTask("tasks/quant_demo.ts", ["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.out, /^usage: deno task quant-demo/m);
  const bad = await runTask("tasks/quant_demo.ts", ["--frobnicate"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: .*frobnicate/m);
  const badValue = await runTask("tasks/quant_demo.ts", ["--elements", "many"]);
  assert.equal(badValue.code, 2);
  assert.match(badValue.err, /--elements must be an integer/);
  const badBackend = await runTask("tasks/quant_demo.ts", ["--backend", "tpu"]);
  assert.equal(badBackend.code, 2);
  assert.match(badBackend.err, /unknown backend "tpu"/);
});

Deno.test("task bench quant: writes its JSON and Markdown report", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runTask("tasks/bench.ts", ["quant", "--backend", "cpu", "--out", dir]);
    assert.equal(r.code, 0, r.err);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/quant.json`));
    assert.equal(json.suite, "quant");
    assert.ok(json.tables[0].rows.length >= 12);
    assert.match(await Deno.readTextFile(`${dir}/quant.md`), /Fused update throughput/);
    const unknown = await runTask("tasks/bench.ts", ["nosuch"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown bench suite "nosuch"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task bench warmstart --help lists the suite's own arguments; a bad one is named", async () => {
  const help = await runTask("tasks/bench.ts", ["warmstart", "--help"]);
  assert.equal(help.code, 0, help.err);
  assert.match(help.out, /^usage: deno task bench/m);
  assert.match(help.out, /^spots=t2,f1 /m);
  assert.match(help.out, /^--backend gpu /m);
  const bad = await runTask("tasks/bench.ts", ["warmstart", "methods=cold,hot"]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.err, /^error: warmstart bench: methods=cold,hot: unknown value "hot"/m);
});

Deno.test("task bench nn: CPU reference rows only with --backend cpu; peak= checked", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runTask("tasks/bench.ts", ["nn", "--backend", "cpu", "--out", dir]);
    assert.equal(r.code, 0, r.err);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/nn.json`));
    assert.equal(json.tables.length, 3);
    for (const t of json.tables) {
      assert.ok(t.rows.length >= 1, t.title);
      for (const row of t.rows) assert.ok(row.includes("cpu"), `${t.title}: ${row}`);
    }
    const bad = await runTask("tasks/bench.ts", ["nn", "--backend", "cpu", "peak=fast"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /peak=<GFLOP\/s> must be positive/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// bench gpu-fma: each probe's FLOP count matches the FMAs its kernel runs, and the suite reports
// every probe and rejects bad arguments.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { fmaProbes, fmaProbeSource, probeFlopsPerRep, suite } from "../../src/gpu/fma_bench.ts";

const gpu = await getGpu();
const opts = { ignore: gpu === null, sanitizeResources: false, sanitizeOps: false };

Deno.test("gpu-fma: FLOPs per repetition are the kernel's vec4 FMAs x 8", () => {
  for (const p of fmaProbes()) {
    const src = fmaProbeSource(p);
    // The repetition loop's body: FMAs inside `for (var r ...)`, times the slice depth.
    const body = src.slice(src.indexOf("for (var r = 0u"));
    const fmas = (body.match(/= fma\(/g) ?? []).length;
    const perRep = fmas * 8 * (p.kind === "registers" ? 1 : p.bk);
    assert.equal(probeFlopsPerRep(p), perRep, JSON.stringify(p));
  }
});

Deno.test("gpu-fma: the suite reports every probe and rejects bad arguments", opts, async () => {
  const r = await suite.run({
    full: false,
    backend: "gpu",
    args: ["groups=2", "reps=2"],
    log: () => {},
  });
  assert.equal(r.tables[0].rows.length, fmaProbes().length);
  for (const row of r.tables[0].rows) assert.ok(Number(row[4]) > 0, `${row[0]}: TFLOP/s`);
  for (const bad of [["groups=0"], ["reps=1.5"], ["size=3"]]) {
    await assert.rejects(
      suite.run({ full: false, backend: "gpu", args: bad, log: () => {} }),
      /gpu-fma/,
      bad.join(" "),
    );
  }
});

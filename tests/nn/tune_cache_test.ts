// The autotuner's disk cache: where it lives, what it keeps, and that the tuner reads it instead of
// timing (software adapter: tuneWinograd on a small shape, as the tuner tests do).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import {
  kernelFingerprint,
  loadTuned,
  saveTuned,
  setTuneCacheEnabled,
  tuneCachePath,
} from "../../src/nn/gpu/tune_cache.ts";
import { testCandidates } from "../../src/nn/gpu/winograd_gemm.ts";
import { forgetTunings, LEGACY, tuneWinograd } from "../../src/nn/gpu/winograd_tune.ts";
import { withEnv } from "../helpers/env.ts";

const ctx = await getGpu();

Deno.test("tune cache: the file's place (variable, XDG, home) and off", async () => {
  const none = { KIBITZ_TUNE_CACHE: null, XDG_CACHE_HOME: null };
  await withEnv({ ...none, HOME: "/h" }, () => {
    assert.equal(tuneCachePath(), "/h/.cache/kibitz/gpu-tuning.json");
  });
  await withEnv({ ...none, XDG_CACHE_HOME: "/x", HOME: "/h" }, () => {
    assert.equal(tuneCachePath(), "/x/kibitz/gpu-tuning.json");
  });
  await withEnv({ ...none, HOME: null }, () => assert.equal(tuneCachePath(), null));
  await withEnv({ KIBITZ_TUNE_CACHE: "/t/c.json" }, () => {
    assert.equal(tuneCachePath(), "/t/c.json");
    setTuneCacheEnabled(false);
    try {
      assert.equal(tuneCachePath(), null);
    } finally {
      setTuneCacheEnabled(true);
    }
  });
  for (const off of ["off", "0"]) {
    await withEnv({ KIBITZ_TUNE_CACHE: off }, () => assert.equal(tuneCachePath(), null));
  }
});

Deno.test("tune cache: results round-trip, merge, and a foreign or corrupt file is no hit", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/sub/tune.json`;
  try {
    await withEnv({ KIBITZ_TUNE_CACHE: path }, async () => {
      assert.equal(await loadTuned("a"), null);
      // Concurrent saves in one process all land (the folder is made on the way).
      await Promise.all([1, 2, 3, 4, 5].map((i) => saveTuned(`k${i}`, { winner: `w${i}` })));
      for (const i of [1, 2, 3, 4, 5]) {
        assert.deepEqual(await loadTuned(`k${i}`), { winner: `w${i}` });
      }
      // Another fingerprint (other kernels) is no hit.
      const f = JSON.parse(await Deno.readTextFile(path));
      assert.equal(f.entries.k1.fingerprint, await kernelFingerprint());
      f.entries.k1.fingerprint = "0".repeat(32);
      await Deno.writeTextFile(path, JSON.stringify(f));
      assert.equal(await loadTuned("k1"), null);
      assert.deepEqual(await loadTuned("k2"), { winner: "w2" });
      // A corrupt file reads as empty and is replaced by the next save.
      await Deno.writeTextFile(path, "{ not json");
      assert.equal(await loadTuned("k2"), null);
      await saveTuned("k6", { winner: "w6" });
      assert.deepEqual(Object.keys(JSON.parse(await Deno.readTextFile(path)).entries), ["k6"]);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune cache: an unwritable place warns once and the run goes on", async () => {
  const dir = await Deno.makeTempDir();
  const errors: string[] = [];
  const error = console.error;
  console.error = (...a: unknown[]) => errors.push(a.join(" "));
  try {
    // The path is a folder: every write fails.
    await withEnv({ KIBITZ_TUNE_CACHE: dir }, async () => {
      await saveTuned("a", { winner: "x" });
      await saveTuned("b", { winner: "y" });
      assert.equal(await loadTuned("a"), null);
    });
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0], /could not write the GPU tuning cache/);
    // No temp file is left beside the folder.
    const parent = dir.slice(0, dir.lastIndexOf("/")), base = dir.slice(dir.lastIndexOf("/") + 1);
    const left = [...Deno.readDirSync(parent)].filter((e) => e.name.startsWith(`${base}.`));
    assert.deepEqual(left, []);
  } finally {
    console.error = error;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune cache: the fingerprint covers the kernels (other tiles, other sources)", async () => {
  const a = await kernelFingerprint();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.equal(await kernelFingerprint(), a);
  assert.notEqual(await kernelFingerprint(TEST_TILES), a);
});

Deno.test({
  name: "tune cache: the tuner stores its result, reads it back instead of timing, and retunes " +
    "for other kernels",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const path = `${dir}/tune.json`;
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    const cands = testCandidates().filter((c) => !c.half).slice(0, 2);
    const shape = { n: 1, ci: 8, co: 8, h: 5, w: 5 };
    const tune = () => tuneWinograd(ctx!, kernels, null, 4, shape, cands);
    const entries = async () => JSON.parse(await Deno.readTextFile(path)).entries;
    try {
      await withEnv({ KIBITZ_TUNE_CACHE: path }, async () => {
        forgetTunings();
        const first = await tune();
        assert.equal(first.cached, undefined);
        const [key] = Object.keys(await entries());
        assert.equal((await entries())[key].result.winner, first.winner);
        // A later process (the memo forgotten) takes the stored winner without timing: shown by a
        // winner edited in the file.
        const other = first.winner === LEGACY ? cands[0].name : LEGACY;
        const f = JSON.parse(await Deno.readTextFile(path));
        f.entries[key].result.winner = other;
        await Deno.writeTextFile(path, JSON.stringify(f));
        forgetTunings();
        const second = await tune();
        assert.equal(second.cached, true);
        assert.equal(second.winner, other);
        // Stored under other kernels: timed again, and the entry rewritten.
        f.entries[key].fingerprint = "f".repeat(32);
        await Deno.writeTextFile(path, JSON.stringify(f));
        forgetTunings();
        const third = await tune();
        assert.equal(third.cached, undefined);
        assert.equal((await entries())[key].fingerprint, await kernelFingerprint());
        // Cache off: timed, the file untouched.
        const before = await Deno.readTextFile(path);
        await withEnv({ KIBITZ_TUNE_CACHE: "off" }, async () => {
          forgetTunings();
          assert.equal((await tune()).cached, undefined);
        });
        assert.equal(await Deno.readTextFile(path), before);
      });
    } finally {
      forgetTunings();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

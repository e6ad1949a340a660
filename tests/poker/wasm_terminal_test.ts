import assert from "node:assert/strict";
import { CfrSolver } from "../../src/cfr/mod.ts";
import { wasmParitySpot } from "../helpers/spots.ts";
import { compileKernel, KERNELS, kernelText, sourceHash } from "../../src/cfr/wasm/build.ts";
import { decodeBase64 } from "../../src/cfr/wasm/base64.ts";
import * as regretWasm from "../../src/cfr/wasm/regret_wasm.ts";
import { regretKernel } from "../../src/cfr/wasm/regret.ts";
import { wasmEnabled } from "../../src/poker/wasm/terminal.ts";
import * as terminalWasm from "../../src/poker/wasm/terminal_wasm.ts";
import * as walkWasm from "../../src/poker/wasm/walk_wasm.ts";
import * as walkMtWasm from "../../src/poker/wasm/walk_mt_wasm.ts";

const BUILT: Record<string, { SOURCE_SHA256: string; WASM_BASE64: string }> = {
  terminal: terminalWasm,
  regret: regretWasm,
  walk: walkWasm,
  walk_mt: walkMtWasm,
};

function game(board: string, wasm: boolean, rake: boolean) {
  return wasmParitySpot(board, rake, wasm);
}

Deno.test("wasm: the committed kernels were built from the current sources", async () => {
  assert.equal(KERNELS.length, Object.keys(BUILT).length);
  for (const k of KERNELS) {
    const text = await kernelText(k);
    assert.equal(
      BUILT[k.out ?? k.name].SOURCE_SHA256,
      await sourceHash(text),
      `${k.out ?? k.name}: deno task build-wasm`,
    );
  }
});

Deno.test("wasm: a rebuild with the pinned asc gives the committed binary byte for byte", async () => {
  for (const k of KERNELS) {
    assert.deepEqual(await compileKernel(k), decodeBase64(BUILT[k.out ?? k.name].WASM_BASE64));
  }
});

Deno.test({
  name:
    "wasm: showdown and fold values are bit-identical to the TypeScript twin (rake, ties, zeros, no reach)",
  ignore: !wasmEnabled(),
  fn() {
    let seed = 11;
    const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    for (const rake of [false, true]) {
      const ts = game("Kh Qd 7c 4s", false, rake), wa = game("Kh Qd 7c 4s", true, rake);
      assert.equal(ts.game.wasm, false);
      assert.equal(wa.game.wasm, true);
      let showdowns = 0;
      for (let n = 0; n < ts.tree.terminal.length; n++) {
        const t = ts.tree.terminal[n];
        if (t < 0) continue;
        assert.equal(wa.tree.terminal[n], t);
        for (const p of [0, 1] as const) {
          const o = 1 - p;
          // Every fourth terminal: no reach at all (+0 and -0), the kernel's shortcut; every other
          // one: runs of 5 zero reaches (+0 and -0; the fold's four-hand skip, misaligned).
          const none = n % 4 === 0, runs = n % 2 === 1;
          const opp = Float32Array.from(
            { length: ts.game.numHands[o] },
            (_, i) =>
              none || (runs && Math.floor(i / 5) % 2 === 0)
                ? (rand() < 0.5 ? -0 : 0)
                : rand() < 0.2
                ? 0
                : Math.fround(rand()),
          );
          const H = ts.game.numHands[p];
          for (const equity of [false, true]) {
            const a = new Float32Array(H + 3).fill(7), b = new Float32Array(H + 3).fill(7);
            if (equity) {
              ts.game.terminalEquity(t, p, opp, a, 3);
              wa.game.terminalEquity(t, p, opp, b, 3);
            } else {
              ts.game.terminalValues(t, p, opp, a, 3);
              wa.game.terminalValues(t, p, opp, b, 3);
            }
            assert.deepEqual(b, a, `terminal ${t} player ${p} equity ${equity}`);
          }
        }
        if (ts.game.terminalTables().board[t] >= 0) showdowns++;
      }
      assert.ok(showdowns > 40, `showdowns ${showdowns}`);
    }
  },
});

Deno.test({
  name: "wasm: a solve on the Wasm kernels (terminals, regret matching) equals the TypeScript one",
  ignore: !wasmEnabled() || regretKernel() === null,
  fn() {
    const run = (wasm: boolean) => {
      const { game: g, tree } = game("Kh Qd 7c 4s 2h", wasm, true);
      const s = new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 7, wasm });
      assert.equal(s.wasm, wasm);
      s.run(20);
      return { root: s.averageStrategy(0), expl: s.exploitability().percent };
    };
    const a = run(false), b = run(true);
    assert.deepEqual(b.root, a.root);
    assert.equal(b.expl, a.expl);
  },
});

Deno.test({
  name:
    "wasm: the fused traverser step (values, instant regrets, both f32 updates) leaves every stored value bit-identical",
  ignore: !wasmEnabled() || regretKernel() === null,
  fn() {
    // A turn spot: river deals, blocked hands, hand counts that are not multiples of 4.
    const run = (wasm: boolean) => {
      const { game: g, tree } = game("Kh Qd 7c 4s", wasm, false);
      const s = new CfrSolver(tree, g, {
        regretBits: 32,
        strategyBits: 32,
        seed: 3,
        wasm,
        wasmWalk: false, // the fused step itself (tests/poker/wasm_walk_test.ts: the whole walk)
      });
      s.run(6);
      return s;
    };
    const a = run(false), b = run(true);
    assert.ok((b as unknown as { fused: boolean }).fused, "the Wasm run takes the fused step");
    assert.ok(a.tree.numHands.some((h) => h % 4 !== 0), `hands ${a.tree.numHands}`);
    const bits = (x: Float32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);
    assert.deepEqual(bits(b.regrets.f32!), bits(a.regrets.f32!));
    assert.deepEqual(bits(b.strategy.f32!), bits(a.strategy.f32!));
  },
});

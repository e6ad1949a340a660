// Real Hive positions through the network: encoded planes and legal-move masks in, a distribution
// over exactly the legal moves out.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import {
  encodeHivePosition,
  HIVE_PLANE_SIZE,
  HIVE_POLICY_SIZE,
  hiveIndexMove,
  hiveLegalMask,
} from "../../src/hive/encoding.ts";
import { netPreset } from "../../src/nn/config.ts";
import { CpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";

Deno.test("the small model scores only the legal moves of real positions", async () => {
  const cfg = netPreset("small");
  assert.equal(cfg.moves, HIVE_POLICY_SIZE);
  assert.equal(cfg.planes * cfg.height * cfg.width, HIVE_PLANE_SIZE);
  const g = HiveGame.fromGameString(
    "Base+MLP;InProgress;White[4];wB1;bP wB1/;wM wB1\\;bM bP/;wS1 -wM;bQ bM\\",
  );
  const g2 = g.clone();
  g2.playString("wQ \\wS1");
  const planes = new Float32Array(2 * HIVE_PLANE_SIZE),
    mask = new Float32Array(2 * HIVE_POLICY_SIZE);
  const legal = [g, g2].map((p, i) => {
    encodeHivePosition(p, planes, i * HIVE_PLANE_SIZE);
    return hiveLegalMask(p, mask, i * HIVE_POLICY_SIZE);
  });
  const out = await new CpuNet(initWeights(cfg, 3)).infer({ size: 2, planes, mask });
  [g, g2].forEach((p, i) => {
    const probs = out.probs.subarray(i * HIVE_POLICY_SIZE, (i + 1) * HIVE_POLICY_SIZE);
    const total = probs.reduce((a, v) => a + v, 0);
    assert.ok(Math.abs(total - 1) < 1e-5);
    let nonzero = 0;
    probs.forEach((v, j) => {
      if (v > 0) {
        nonzero++;
        assert.ok(legal[i].includes(hiveIndexMove(p, j)), `index ${j} is not a legal move`);
      }
    });
    assert.equal(nonzero, legal[i].length);
  });
});

import { equal, ok, rejects } from "node:assert/strict";
import {
  HIVE_SELFPLAY_RULES,
  HiveAzGame,
  hiveCellsCpuPreset,
  hiveOutcome,
  hiveSpec,
  hiveTinyPreset,
  warmStart,
} from "../../src/alphazero/hive.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { initWeights } from "../../src/nn/params.ts";
import { runLoop } from "../../src/alphazero/loop.ts";
import { ReplayBuffer } from "../../src/alphazero/buffer.ts";
import { encodeHivePosition, HIVE_PLANE_SIZE, hiveMoveIndex } from "../../src/hive/encoding.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { transformGame, transformMove } from "../../src/hive/symmetry.ts";

// An engine game where White's last move surrounds its own queen: Black wins, whoever moved.
const WIN = [
  "wP",
  "bS1 \\wP",
  "wA1 wP\\",
  "bM \\bS1",
  "wS1 wA1-",
  "bS2 \\bM",
  "wQ /wA1",
  "bQ \\bS2",
  "wA2 wS1/",
  "bB1 bS1/",
  "wA2 bQ/",
  "bA1 \\bB1",
  "wA3 wS1/",
  "bA1 wQ\\",
  "wA3 /bQ",
  "bA2 \\bB1",
  "wS1 bA1\\",
  "bA2 -wQ",
  "wM wA1-",
  "bA3 \\bB1",
  "wM -wA2",
  "bA3 wA1\\",
  "wB1 \\wA2",
  "bG1 \\bB1",
  "wG1 wS1-",
  "bM /wP",
  "wA2 bA2\\",
];

Deno.test("hive adapter: results come from the position, with self-play's draw rules", () => {
  const g = new HiveGame("Base+MLP");
  const az = new HiveAzGame(g, { ...HIVE_SELFPLAY_RULES, maxPlies: 0, threefold: false });
  for (const m of WIN.slice(0, -1)) {
    equal(az.result(), null);
    const code = g.parseMove(m);
    ok(az.legalMoves().includes(code), m);
    az.play(code);
  }
  const last = g.parseMove(WIN[WIN.length - 1]);
  ok(az.legalMoves().includes(last));
  az.play(last);
  // Black is to move and has won: +1 for the side to move, though White moved last.
  equal(g.state, 4);
  equal(az.result(), 1);
  equal(hiveOutcome(g), 1);
  equal(az.legalMoves().length, 0);
  az.undo();
  equal(az.result(), null);

  // Ply cap.
  const capped = new HiveAzGame(new HiveGame("Base+MLP"), { ...HIVE_SELFPLAY_RULES, maxPlies: 2 });
  for (const m of capped.legalMoves().slice(0, 1)) capped.play(m);
  capped.play(capped.legalMoves()[0]);
  equal(capped.result(), 0);

  // Threefold repetition: a white and a black piece step out and back three times.
  const r = new HiveGame("Base+MLP");
  for (const m of ["wS1", "bS1 -wS1", "wQ wS1-", "bQ -bS1"]) r.playString(m);
  const rep = new HiveAzGame(r, HIVE_SELFPLAY_RULES);
  const back = (m: number, from: number) => (m & ~1023) | from;
  let cycle: number[] | null = null;
  for (const w of rep.legalMoves()) {
    const wFrom = r.pieceCell[w >> 10];
    if (wFrom < 0 || cycle) continue;
    rep.play(w);
    for (const b of rep.legalMoves()) {
      const bFrom = r.pieceCell[b >> 10];
      if (bFrom < 0) continue;
      rep.play(b);
      const wb = back(w, wFrom);
      if (rep.legalMoves().includes(wb)) {
        rep.play(wb);
        if (rep.legalMoves().includes(back(b, bFrom))) cycle = [w, b, wb, back(b, bFrom)];
        rep.undo();
      }
      rep.undo();
      if (cycle) break;
    }
    rep.undo();
  }
  ok(cycle, "a reversible pair of moves exists");
  // The draw comes at a cycle's end (the position then seen a third time), after 2 or 3 cycles
  // (2 when the black piece is bS1, the last mover before the cycles, so the start repeats too).
  let plies = 0;
  while (rep.result() === null && plies < 12) rep.play(cycle![plies++ % 4]);
  ok(plies === 8 || plies === 12, `draw after ${plies} plies`);
  equal(rep.result(), 0);
  rep.undo();
  equal(rep.result(), null);
});

Deno.test("hive adapter: the symmetric view encodes the rotated board with matching move indices", () => {
  const spec = hiveSpec(HIVE_SELFPLAY_RULES, true);
  const games = Array.from({ length: 3 }, () => spec.create() as HiveAzGame);
  equal(games[1].symmetry, 1);
  const az = games[2];
  for (const m of ["wS1", "bS1 -wS1", "wQ wS1/", "bQ \\bS1"]) {
    const code = az.game.parseMove(m);
    ok(az.legalMoves().includes(code), m);
    az.play(code);
  }
  const view = transformGame(az.game, 2);
  const a = new Float32Array(HIVE_PLANE_SIZE), b = new Float32Array(HIVE_PLANE_SIZE);
  az.encode(a, 0);
  encodeHivePosition(view, b, 0);
  equal(a.join(), b.join());
  for (const m of az.legalMoves()) {
    equal(az.moveIndex(m), hiveMoveIndex(view, transformMove(m, 2)));
  }
  const c = az.clone();
  equal(c.hash(), az.hash());
  equal(c.moveIndex(az.legalMoves()[0]), az.moveIndex(az.legalMoves()[0]));
});

Deno.test("hive adapter: one AlphaZero iteration runs end to end on the CPU (hive-tiny)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const preset = hiveTinyPreset();
    // Warm start from a "pretrained" network (here: seeded weights saved as a model file).
    const init = `${dir}/init.kbhz`;
    await Deno.writeFile(init, encodeHiveModel(initWeights(preset.net, 9), { name: "warm" }));
    equal(await warmStart(`${dir}/run`, init, preset.net), true);
    equal(await warmStart(`${dir}/run`, init, preset.net), false); // never over a run's best
    const best = await loadCheckpoint(`${dir}/run/best.kbnn`);
    equal(best.meta.warmStart, init);
    const lines = await runLoop(`${dir}/run`, preset, "cpu");
    equal(lines.length, 1);
    const sp = (await Deno.readTextFile(`${dir}/run/selfplay/iter-0001.jsonl`)).trim().split("\n");
    equal(sp.length, 2);
    for (const l of sp) ok(JSON.parse(l).plies <= 6, l);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hive adapter: a cells-head network self-plays and trains (move cells in the buffer)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const preset = hiveTinyPreset();
    preset.net = { ...preset.net, cells: { hidden: 4, planes: 16, biases: 17 } };
    // Warm start from a cells-head file of the same shape (an FC file is refused).
    const init = `${dir}/init.kbhz`, fc = `${dir}/fc.kbhz`;
    await Deno.writeFile(init, encodeHiveModel(initWeights(preset.net, 9), { name: "warm" }));
    await Deno.writeFile(fc, encodeHiveModel(initWeights(hiveTinyPreset().net, 9), { name: "fc" }));
    await rejects(warmStart(`${dir}/run`, fc, preset.net), /cells head/);
    equal(await warmStart(`${dir}/run`, init, preset.net), true);
    ok(hiveCellsCpuPreset().net.cells, "the hive-cells-cpu preset has the cells head");
    const lines = await runLoop(`${dir}/run`, preset, "cpu");
    equal(lines.length, 1);
    const buffer = await ReplayBuffer.open(`${dir}/run/buffer`, 100, 24 * 26 * 26, 5489);
    ok(buffer.size > 0);
    const p = buffer.position(0);
    equal(p.cells!.length, p.legal.length * 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

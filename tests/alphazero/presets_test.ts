import assert from "node:assert/strict";
import { azGames, azPreset, seed003Preset } from "../../src/alphazero/presets.ts";
import { TICTACTOE } from "../../src/alphazero/games/tictactoe.ts";
import type { GameSpec } from "../../src/mcts/game.ts";
import { isKibitzError } from "../../src/errors.ts";

Deno.test("presets: seed 003's numbers are the defaults", () => {
  const p = seed003Preset(TICTACTOE as GameSpec<unknown>);
  const s = p.selfplay.search;
  assert.deepEqual(
    [s.cPuct, s.dirichletAlpha, s.dirichletEpsilon, s.noise, p.arena.search.noise],
    [2.5, 0.15, 0.25, true, false],
  );
  assert.deepEqual(
    [
      p.selfplay.playouts,
      p.selfplay.temperatureMoves,
      p.selfplay.temperature,
      p.selfplay.lateTemperature,
    ],
    [800, 15, 1, 0.1],
  );
  assert.deepEqual([p.gamesPerIteration, p.bufferCapacity, p.maxBatch], [256, 500_000, 256]);
  assert.deepEqual(
    [
      p.train.batch,
      p.train.steps,
      p.train.momentum,
      p.train.weightDecay,
      p.train.lrMax,
      p.train.lrMin,
    ],
    [512, 1000, 0.9, 1e-4, 0.01, 0.0001],
  );
  assert.deepEqual([p.arena.games, p.arena.playouts, p.promoteAt], [400, 400, 0.55]);
  assert.deepEqual([p.net.blocks, p.net.filters], [19, 256]);
});

Deno.test("presets: every game's network fits its game; unknown names are refused", () => {
  for (const name of azGames()) {
    const p = azPreset(name);
    const g = p.game;
    assert.deepEqual([p.net.planes, p.net.height, p.net.width, p.net.moves], [
      g.planes,
      g.height,
      g.width,
      g.moves,
    ]);
    const pos = g.create();
    for (const m of pos.legalMoves()) assert(pos.moveIndex(m) >= 0 && pos.moveIndex(m) < g.moves);
  }
  assert.throws(() => azPreset("go"), (e) => isKibitzError(e, "bad_args"));
});

/** Runs `tasks/NAME.ts` with the arguments; its exit code and decoded output. */
async function runTask(name: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `tasks/${name}.ts`, ...args],
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("tasks: az, selfplay, train and arena answer --help; a bad game is an error", async () => {
  for (const t of ["az", "selfplay", "train", "arena"]) {
    const out = await runTask(t, "--help");
    assert.equal(out.code, 0);
    assert.match(out.stdout, new RegExp(`usage: deno task ${t} `));
    if (t === "az") assert.match(out.stdout, /--arena-playouts[\s\S]*--max-plies/);
  }
  const bad = await runTask("az", "chess");
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /error: game "chess": unknown/);
  const badPlayouts = await runTask("az", "tictactoe", "--arena-playouts", "0", "--dir", "out/x");
  assert.notEqual(badPlayouts.code, 0);
  assert.match(badPlayouts.stderr, /arena-playouts/);
});

Deno.test("tasks: az --max-plies caps self-play and arena games (scored draws)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = await runTask(
      "az",
      "tictactoe",
      ...["--dir", dir, "--iterations", "1", "--games", "2", "--playouts", "4", "--steps", "1"],
      ...["--arena-games", "2", "--arena-playouts", "2", "--max-plies", "3", "--backend", "cpu"],
    );
    assert.equal(out.code, 0, out.stderr);
    // Self-play progress counts the moves of every game, with live rates.
    assert.match(
      out.stderr,
      /self-play \d\/2 games, \d moves \([\d.]+\/s, \d+ playouts\/s, \d+ evaluations\/s\)/,
    );
    const log = JSON.parse((await Deno.readTextFile(`${dir}/log.jsonl`)).trim());
    // Tic-tac-toe cannot end before ply 5: every game stops at the cap of 3.
    assert.equal(log.selfplay.positions, 6);
    assert.deepEqual([log.arena.games, log.arena.draws], [2, 2]);
    const arena = (await Deno.readTextFile(`${dir}/arena/iter-0001.jsonl`)).trim().split("\n");
    for (const line of arena) assert.equal(JSON.parse(line).moves.length, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

import assert from "node:assert/strict";
import { ReplayBuffer } from "../../src/alphazero/buffer.ts";
import { azPreset } from "../../src/alphazero/presets.ts";
import { inputSize } from "../../src/mcts/game.ts";
import { interruptTask } from "../helpers/task_process.ts";

// `deno task selfplay` stopped by a job scheduler's SIGTERM (or Ctrl-C) ends cleanly: the games in
// play are finished and stored, and the buffer holds exactly the games it reports.

Deno.test("selfplay task: SIGTERM stores the games in play and exits cleanly", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await interruptTask(
      "tasks/selfplay.ts",
      ["tictactoe", "--buffer", dir, "--games", "1000000", "--backend", "cpu"],
      /self-play [1-9]\d*\/1000000 games/,
      "SIGTERM",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /selfplay: stopping once the games in play are stored/);
    assert.match(r.stderr, /games, \d+ positions in [\d.]+ s \(stopped\)/);
    const stats = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.ok(stats.games >= 1 && stats.games < 1_000_000, `${stats.games}`);
    const p = azPreset("tictactoe");
    const buffer = await ReplayBuffer.open(
      dir,
      p.bufferCapacity,
      inputSize(p.game),
      p.game.moves,
      p.net.cells !== undefined,
    );
    assert.equal(buffer.gamesFor(0), stats.games);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

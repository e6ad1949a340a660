// The loop over a state folder: an interrupted and resumed run ends exactly where an uninterrupted
// one does (same games, same arena, same weights), and the folder holds what the README says.
import assert from "node:assert/strict";
import { readJsonLines, runLoop } from "../../src/alphazero/loop.ts";
import { azPreset, netFor } from "../../src/alphazero/presets.ts";
import { defaultSearchConfig } from "../../src/mcts/search.ts";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { getGpu } from "../../src/gpu/device.ts";

function preset() {
  const p = azPreset("tictactoe");
  p.net = netFor(p.game, { ...NET_PRESETS.tiny, blocks: 1, filters: 8, valueHidden: 8 });
  p.gamesPerIteration = 8;
  p.iterations = 2;
  p.selfplay.playouts = 16;
  p.selfplay.concurrency = 4;
  p.selfplay.search = defaultSearchConfig({ noise: true, dirichletAlpha: 1, leavesPerRound: 4 });
  p.train.steps = 4;
  p.train.batch = 16;
  p.arena.games = 4;
  p.arena.playouts = 8;
  p.arena.concurrency = 4;
  p.perfectCheckPlayouts = 0;
  return p;
}

async function snapshot(dir: string) {
  const sp = [
    ...await readJsonLines<{ iteration: number; game: number; moves: string }>(
      `${dir}/selfplay/iter-0001.jsonl`,
    ),
    ...await readJsonLines<{ iteration: number; game: number; moves: string }>(
      `${dir}/selfplay/iter-0002.jsonl`,
    ),
  ].map((g) => `${g.iteration}:${g.game}:${g.moves}`).sort();
  const log = (await readJsonLines<{ iteration: number; arena: unknown; promoted: boolean }>(
    `${dir}/log.jsonl`,
  )).map((l) => JSON.stringify([l.iteration, l.arena, l.promoted]));
  const cand = await loadCheckpoint(`${dir}/candidate.kbnn`);
  const weights = [...cand.weights.tensors.values()].map((t) => [...t.data].join(",")).join("|");
  return { sp, log, weights };
}

/**
 * Runs `f` with chunks 0 and 2 (each iteration's first, as a rule) slow to land: each one's rename
 * waits until a later chunk's rename is done, or `ms`. A loaded machine once did this to the
 * uninterrupted run (the second chunk of iteration 2 reached the in-memory buffer first, so its
 * training sampled other positions than the resumed run's, read from disk in file order).
 */
async function withSlowFirstChunks<T>(ms: number, f: () => Promise<T>): Promise<T> {
  const rename = Deno.rename;
  let wake = () => {};
  let later = new Promise<void>((r) => wake = r);
  Deno.rename = async (from: string | URL, to: string | URL) => {
    const slow = /chunk-0000000[02]\.kbrb$/.test(String(to));
    if (slow) await Promise.race([later, new Promise((r) => setTimeout(r, ms))]);
    await rename(from, to);
    if (!slow && /chunk-\d+\.kbrb$/.test(String(to))) {
      wake();
      later = new Promise<void>((r) => wake = r);
    }
  };
  try {
    return await f();
  } finally {
    Deno.rename = rename;
  }
}

Deno.test("loop: a run stopped in self-play and in training resumes to the same result", async () => {
  const a = await Deno.makeTempDir(), b = await Deno.makeTempDir();
  try {
    const full = await withSlowFirstChunks(400, () => runLoop(a, preset(), "cpu"));
    assert.equal(full.length, 2);
    // Stop during iteration 1's self-play, then during its training, then finish.
    let stop = false;
    const hooks = (pattern: RegExp) => ({
      progress: (t: string) => {
        if (pattern.test(t)) stop = true;
      },
      stopped: () => stop,
    });
    assert.equal((await runLoop(b, preset(), "cpu", hooks(/self-play/))).length, 0);
    const partial = await readJsonLines(`${b}/selfplay/iter-0001.jsonl`);
    assert(partial.length > 0 && partial.length < 8, `${partial.length} games before the stop`);
    stop = false;
    assert.equal((await runLoop(b, preset(), "cpu", hooks(/train 2\//))).length, 0);
    assert.equal((await loadCheckpoint(`${b}/candidate.kbnn`)).meta.step, 2);
    stop = false;
    assert.equal((await runLoop(b, preset(), "cpu")).length, 2);
    assert.deepEqual(await snapshot(b), await snapshot(a));
    // The state folder's files.
    const names = [...Deno.readDirSync(a)].map((e) => e.name).sort();
    assert.deepEqual(names, [
      "arena",
      "best.kbnn",
      "buffer",
      "candidate.kbnn",
      "log.jsonl",
      "selfplay",
      "state.json",
    ]);
    const arena = await readJsonLines<{ candidateFirst: boolean }>(`${a}/arena/iter-0001.jsonl`);
    assert.equal(arena.length, 4);
    assert.equal(arena.filter((g) => g.candidateFirst).length, 2);
    const line = (await readJsonLines<Record<string, unknown>>(`${a}/log.jsonl`))[0];
    for (const k of ["arena", "train", "selfplay", "generation", "promoted", "bufferPositions"]) {
      assert(k in line, `log line lacks ${k}`);
    }
    // Another game in the same folder is refused.
    await assert.rejects(
      () => runLoop(a, azPreset("connect3-5x4"), "cpu"),
      /holds a tictactoe run/,
    );
  } finally {
    await Deno.remove(a, { recursive: true });
    await Deno.remove(b, { recursive: true });
  }
});

Deno.test({
  name: "loop: an iteration on the GPU readies every padded batch size before self-play's clock",
  ignore: !(await getGpu()),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const p = { ...preset(), iterations: 1 };
      const said: string[] = [];
      const [line] = await runLoop(dir, p, "gpu", { progress: (t) => said.push(t) });
      assert.equal(line.selfplay!.games, 8);
      assert(line.selfplay!.prepareSeconds! > 0);
      assert.equal(line.arena.games, 4);
      // maxBatch 256: sizes 8 to 256 are readied, then the live rates follow.
      const ready = said.findIndex((t) =>
        /network ready for batch sizes 8, 16, 32, 64, 128, 256 in/.test(t)
      );
      assert(ready >= 0, said.join("\n"));
      assert(said.slice(ready + 1).some((t) => /self-play \d\/8 games, \d+ moves/.test(t)));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

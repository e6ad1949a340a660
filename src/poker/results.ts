import { crc32, crc32Update } from "../crc32.ts";
export { crc32Update };
import {
  type CfrPolicy,
  type NodeReport,
  policyHandValues,
  TreeEvaluator,
} from "../cfr/evaluate.ts";
import { CFR_CHANCE, CFR_PLAYER, findNode, nodePath, type PublicTree } from "../cfr/tree.ts";
import { actionReach, outcomeReach } from "../cfr/walk.ts";
import { KibitzError } from "../errors.ts";
import { streamFileAtomic } from "../cli/atomic.ts";
import { encodeFileHead } from "./file_head.ts";
import { cardName, gridCell, parseCard, RANK_CHARS, SUIT_CHARS } from "./cards.ts";
import type { PostflopGame } from "./game.ts";

/** Root summary: action frequencies over the range, EVs and equities of both players. */
export interface RootSummary {
  /** Who acts at the node (null at a chance or terminal node). */
  player: "oop" | "ip" | null;
  actions: string[];
  frequencies: number[];
  /** Expected chips won from the pot by OOP and IP (sum = pot minus expected rake). */
  ev: [number, number];
  /** All-in equity (share of the pot at showdown with no more betting) of OOP and IP. */
  equity: [number, number];
  /** 13 x 13 hand classes: per cell, the frequency of each root action (null if no hands). */
  grid: (number[] | null)[][];
  /** Per-hand EV (chips from the pot) and equity of each player. */
  hands: [HandStats, HandStats];
}

/** Per-hand numbers of one player at the root. */
export interface HandStats {
  labels: string[];
  weights: number[];
  ev: number[];
  equity: number[];
}

/** Deal weight of each hand: its range weight times the opponent's compatible range mass. */
function dealWeights(game: PostflopGame, p: 0 | 1): Float32Array {
  const comp = new Float32Array(game.numHands[p]);
  game.compatibleSums(p, game.initialWeights((1 - p) as 0 | 1), comp);
  const w = game.initialWeights(p);
  return comp.map((c, h) => c * w[h]);
}

/** Computes the root summary of a strategy profile. */
export function rootSummary(tree: PublicTree, game: PostflopGame, policy: CfrPolicy): RootSummary {
  const ev = new TreeEvaluator(tree, game);
  const half = game.startingPot / 2;
  const hands = ([0, 1] as const).map((p) => {
    const v = policyHandValues(ev, p, policy);
    const eq = game.equity(p);
    const dw = dealWeights(game, p);
    return {
      labels: Array.from({ length: game.numHands[p] }, (_, h) => game.handLabel(p, h)),
      weights: Array.from(dw),
      ev: Array.from(v, (x) => x + half),
      equity: Array.from(eq),
    };
  }) as [HandStats, HandStats];
  return summarize(tree, game, policy, 0, hands);
}

/** Per hand class of the 13 x 13 grid, the frequency of every bet and raise (null: no hands). */
export function betFrequencyGrid(s: RootSummary): (number | null)[][] {
  const aggressive = s.actions.map((a) => !/^(Check|Call|Fold)$/.test(a));
  return s.grid.map((row) =>
    row.map((c) => c ? c.reduce((acc, x, a) => acc + (aggressive[a] ? x : 0), 0) : null)
  );
}

/** x with `digits` decimals; "n/a" for a value that is not finite (never "NaN"). */
function fixed(x: number, digits = 2): string {
  return Number.isFinite(x) ? x.toFixed(digits) : "n/a";
}

/** Prints a node summary: action frequencies, EV/equity, and a 13x13 grid of bet frequency. */
export function formatRootSummary(s: RootSummary, where = "root"): string {
  const lines: string[] = [];
  lines.push(
    `OOP: EV ${fixed(s.ev[0])}  equity ${fixed(100 * s.equity[0])}%   ` +
      `IP: EV ${fixed(s.ev[1])}  equity ${fixed(100 * s.equity[1])}%`,
  );
  if (s.actions.length === 0) return lines.join("\n");
  lines.push(
    `${where} (${(s.player ?? "").toUpperCase()}): ` +
      s.actions.map((a, i) => `${a} ${fixed(100 * s.frequencies[i], 1)}%`).join(", "),
  );
  const bets = betFrequencyGrid(s);
  lines.push("", "bet/raise frequency % by hand class (suited above the diagonal, . = none):");
  lines.push("      " + [...RANK_CHARS].reverse().map((r) => r.padStart(4)).join(""));
  for (let row = 0; row < 13; row++) {
    const cells = bets[row].map((f) =>
      f === null ? "   ." : (Number.isFinite(f) ? String(Math.round(100 * f)) : "?").padStart(4)
    );
    lines.push(`   ${RANK_CHARS[12 - row]}  ${cells.join("")}`);
  }
  return lines.join("\n");
}

/** One first-street node of result.json: its strategy, EVs and equities per hand. */
export interface FirstStreetNode {
  path: string[];
  player: "oop" | "ip";
  actions: string[];
  strategy: Record<string, number[]>;
  ev: { oop: Record<string, number>; ip: Record<string, number> };
  equity: { oop: Record<string, number>; ip: Record<string, number> };
}

/** Per-node strategies, EVs and equities of the first street (before any chance card). */
export function firstStreetNodes(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
): FirstStreetNode[] {
  return [...eachFirstStreetNode(tree, game, policy)];
}

/** firstStreetNodes one node at a time (result.json streams them), in the same order. */
export function* eachFirstStreetNode(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
): Generator<FirstStreetNode> {
  const stats = firstStreetStats(tree, game, policy);
  const perHand = (xs: number[][], q: 0 | 1) => {
    const rec: Record<string, number> = {};
    for (let h = 0; h < game.numHands[q]; h++) {
      rec[game.handLabel(q, h)] = Math.round((xs[q][h] ?? 0) * 1e4) / 1e4;
    }
    return rec;
  };
  function* visit(n: number): Generator<FirstStreetNode> {
    if (tree.kind[n] !== CFR_PLAYER) return;
    const A = tree.numChildren[n], p = tree.player[n] as 0 | 1, H = tree.numHands[p];
    const sig = new Float32Array(A * H);
    policy(n, sig);
    const actions: string[] = [];
    for (let c = tree.firstChild[n]; c < tree.firstChild[n] + A; c++) actions.push(tree.label[c]);
    const strategy: Record<string, number[]> = {};
    for (let h = 0; h < H; h++) {
      strategy[game.handLabel(p, h)] = Array.from(
        { length: A },
        (_, a) => Math.round(sig[a * H + h] * 1e5) / 1e5,
      );
    }
    const st = stats.get(n)!;
    yield {
      path: nodePath(tree, n),
      player: p === 0 ? "oop" : "ip",
      actions,
      strategy,
      ev: { oop: perHand(st.ev, 0), ip: perHand(st.ev, 1) },
      equity: { oop: perHand(st.equity, 0), ip: perHand(st.equity, 1) },
    };
    for (let c = tree.firstChild[n]; c < tree.firstChild[n] + A; c++) {
      if (tree.kind[c] !== CFR_CHANCE) yield* visit(c);
    }
  }
  yield* visit(0);
}

/** Average strategies of every player node, concatenated in block order (for the binary save). */
export function collectStrategies(tree: PublicTree, policy: CfrPolicy): Float32Array {
  let total = 0;
  for (let b = 0; b < tree.blockNode.length; b++) total += tree.blockSize[b];
  const out = new Float32Array(total);
  let off = 0;
  for (let b = 0; b < tree.blockNode.length; b++) {
    const view = out.subarray(off, off + tree.blockSize[b]);
    policy(tree.blockNode[b], view);
    off += tree.blockSize[b];
  }
  return out;
}

/**
 * solve.bin layout (little endian):
 *   "KBZSOLVE" | u32 version | u32 header bytes | header JSON (padded with spaces to 4) | f32
 *   strategies (every player node's actions x hands, in block order) | u32 CRC-32 of all before.
 * The header holds the config text and the solve's meta. Format 1 ("KBZSOLV1", no version, no
 * checksum) is refused with a message saying so.
 */
export const SAVE_VERSION = 2;
const MAGIC = "KBZSOLVE", MAGIC_V1 = "KBZSOLV1";

/** What a solve.bin holds: the config text, the solve's meta, and the average strategies. */
export interface SolveSave {
  header: { config: string; meta: Record<string, unknown> };
  strategies: Float32Array;
}

/** The bytes of a save before its strategies: magic, version, header length and padded header. */
function saveHead(header: SolveSave["header"]): Uint8Array {
  return encodeFileHead(MAGIC, SAVE_VERSION, header);
}

/** Encodes a binary save in memory (see SAVE_VERSION for the layout); solves stream it instead. */
export function encodeSave(header: SolveSave["header"], strategies: Float32Array): Uint8Array {
  const head = saveHead(header);
  const body = head.length + strategies.byteLength;
  const out = new Uint8Array(body + 4);
  out.set(head, 0);
  out.set(
    new Uint8Array(strategies.buffer, strategies.byteOffset, strategies.byteLength),
    head.length,
  );
  new DataView(out.buffer).setUint32(body, crc32(out.subarray(0, body)), true);
  return out;
}

/** A save to stream: its header and the policy that gives each player node's strategy. */
export interface StreamedSave {
  header: SolveSave["header"];
  tree: PublicTree;
  policy: CfrPolicy;
}

/**
 * The bytes of a save in chunks of about `chunk` bytes, one block's strategy at a time, the CRC
 * computed as they go: the same bytes as encodeSave of collectStrategies, without holding every
 * node's strategy at once. A chunk is valid until the next one is asked for (one buffer is reused).
 */
export function* saveChunks(save: StreamedSave, chunk = 1 << 20): Generator<Uint8Array> {
  const { tree, policy } = save;
  let maxBlock = 0;
  for (let b = 0; b < tree.blockNode.length; b++) maxBlock = Math.max(maxBlock, tree.blockSize[b]);
  const head = saveHead(save.header);
  let crc = crc32Update(0, head);
  yield head;
  const buf = new Float32Array(Math.max(chunk >> 2, maxBlock));
  const bytes = new Uint8Array(buf.buffer);
  let fill = 0;
  const flush = () => {
    const out = bytes.subarray(0, 4 * fill);
    crc = crc32Update(crc, out);
    fill = 0;
    return out;
  };
  for (let b = 0; b < tree.blockNode.length; b++) {
    const size = tree.blockSize[b];
    if (fill + size > buf.length) yield flush();
    policy(tree.blockNode[b], buf.subarray(fill, fill + size));
    fill += size;
  }
  if (fill > 0) yield flush();
  const tail = new Uint8Array(4);
  new DataView(tail.buffer).setUint32(0, crc, true);
  yield tail;
}

/** Decodes a binary save, checking its version, checksum, header and values; errors name the file. */
export function decodeSave(bytes: Uint8Array, where: string): SolveSave {
  const bad = (why: string): never => {
    throw new KibitzError("bad_save", `${where}: ${why}`);
  };
  const magic = new TextDecoder().decode(bytes.subarray(0, 8));
  if (magic === MAGIC_V1) {
    bad(
      `written in solve.bin format 1 (no version, no checksum), which this Kibitz no longer reads; solve the spot again to write format ${SAVE_VERSION}`,
    );
  }
  if (bytes.length < 20 || magic !== MAGIC) bad(`not a Kibitz solve save (no ${MAGIC} header)`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = dv.getUint32(8, true);
  if (version !== SAVE_VERSION) {
    bad(`solve.bin format version ${version}; this Kibitz reads version ${SAVE_VERSION}`);
  }
  const body = bytes.length - 4;
  if (crc32(bytes.subarray(0, body)) !== dv.getUint32(body, true)) {
    bad("checksum mismatch: the file is truncated or corrupt");
  }
  const len = dv.getUint32(12, true);
  if (16 + len > body || (body - 16 - len) % 4 !== 0) bad("the header length is wrong");
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + len)));
  } catch {
    bad("the header is not valid JSON");
  }
  const h = header as Record<string, unknown> | null;
  if (typeof h !== "object" || h === null || Array.isArray(h)) bad("the header is not an object");
  if (typeof h!.config !== "string") bad("malformed header: no config text");
  const meta = h!.meta;
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
    bad("malformed header: no meta object");
  }
  // A view of the file's bytes where they are 4-byte aligned (no second copy), else a copy.
  const at = bytes.byteOffset + 16 + len, n = (body - 16 - len) / 4;
  const strategies = at % 4 === 0
    ? new Float32Array(bytes.buffer, at, n)
    : new Float32Array(bytes.slice(16 + len, body).buffer);
  for (let i = 0; i < strategies.length; i++) {
    const x = strategies[i];
    if (!(x >= 0 && x <= 1 + 1e-6)) bad(`strategy value ${i} is ${x}, not a probability`);
  }
  return {
    header: { config: h!.config as string, meta: meta as Record<string, unknown> },
    strategies,
  };
}

/** EV (chips from the pot, same scale as the root) and equity per hand at one node. */
export interface NodeHandStats {
  ev: [number[], number[]];
  equity: [number[], number[]];
}

/**
 * Unnormalized counterfactual values of every hand of `p` at `node` against the opponent reach
 * `opp` there, under `policy`: the engine's evaluation walk (TreeEvaluator.nodeValues) started at
 * `node`. `onPlayerNode(n, values, opp)` sees the values at every player node from `node` down to
 * the next chance cards (scratch views: copy what must be kept).
 */
export function subtreeValues(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  node: number,
  p: 0 | 1,
  opp: Float32Array,
  onPlayerNode?: NodeReport,
): Float32Array {
  const out = new Float32Array(game.numHands[p]);
  new TreeEvaluator(tree, game).nodeValues(node, p, opp, policy, "profile", out, { onPlayerNode });
  return out;
}

/**
 * Per-hand EV and equity of both players at every player node of the first street (before any
 * chance card), from one traversal per player that keeps the counterfactual values and the
 * opponent's reach at those nodes. EV(h) = pot/2 + value(h) / (compatible opponent reach);
 * equity is the all-in equity against the opponent's range as it reaches the node.
 */
export function firstStreetStats(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
): Map<number, NodeHandStats> {
  const stats = new Map<number, NodeHandStats>();
  const half = game.startingPot / 2;
  for (const p of [0, 1] as const) {
    const o = (1 - p) as 0 | 1;
    const H = game.numHands[p];
    // The opponent's reach changes at its own nodes only: nodes after p's actions share it, and
    // with it the equity (a walk over every runout), computed once per distinct reach.
    const seen: { opp: Float32Array; eq: Float32Array }[] = [];
    const equity = (opp: Float32Array) => {
      const same = seen.find((x) => x.opp.every((v, i) => Object.is(v, opp[i])));
      if (same) return same.eq;
      const eq = game.equity(p, opp);
      seen.push({ opp: opp.slice(), eq });
      return eq;
    };
    subtreeValues(tree, game, policy, 0, p, game.initialWeights(o).slice(), (n, out, opp) => {
      const comp = new Float32Array(H);
      game.compatibleSums(p, opp, comp);
      const eq = equity(opp);
      const s = stats.get(n) ?? { ev: [[], []], equity: [[], []] } as NodeHandStats;
      s.ev[p] = Array.from(out, (x, h) => (comp[h] > 0 ? half + x / comp[h] : 0));
      s.equity[p] = Array.from(eq);
      stats.set(n, s);
    });
  }
  return stats;
}

/**
 * Summary at any node (a path of action and card labels from the root): both players' reach
 * along the path, the acting player's action frequencies and 13 x 13 grid weighted by its reach,
 * and per-hand EV and equity of both players there.
 */
export function nodeSummary(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  node: number,
): RootSummary {
  const path: number[] = [];
  for (let n = node; n > 0; n = tree.parent[n]) path.push(n);
  path.reverse();
  const reach: [Float32Array, Float32Array] = [
    game.initialWeights(0).slice(),
    game.initialWeights(1).slice(),
  ];
  const board = [...game.board];
  let at = 0;
  for (const next of path) {
    const idx = next - tree.firstChild[at];
    // The walk's reach steps (cfr/walk.ts), applied in place along the path for both players.
    if (tree.kind[at] === CFR_PLAYER) {
      const q = tree.player[at] as 0 | 1, Hq = game.numHands[q];
      const sig = new Float32Array(tree.numChildren[at] * Hq);
      policy(at, sig);
      actionReach(reach[q], sig, idx, Hq, reach[q]);
    } else {
      for (const q of [0, 1] as const) outcomeReach(tree, next, q, reach[q], reach[q], 0);
      board.push(parseCardLabel(tree.label[next]));
    }
    at = next;
  }
  const half = game.startingPot / 2;
  const hands = ([0, 1] as const).map((p) => {
    const o = (1 - p) as 0 | 1;
    const comp = new Float32Array(game.numHands[p]);
    game.compatibleSums(p, reach[o], comp);
    const v = subtreeValues(tree, game, policy, node, p, reach[o]);
    const eq = game.equity(p, reach[o], board);
    return {
      labels: Array.from({ length: game.numHands[p] }, (_, h) => game.handLabel(p, h)),
      weights: Array.from(comp, (c, h) => c * reach[p][h]),
      ev: Array.from(v, (x, h) => (comp[h] > 0 ? half + x / comp[h] : 0)),
      equity: Array.from(eq),
    };
  }) as [HandStats, HandStats];
  return summarize(tree, game, policy, node, hands);
}

function parseCardLabel(label: string): number {
  return 4 * RANK_CHARS.indexOf(label[0]) + "cdhs".indexOf(label[1]);
}

/** Frequencies, grid and averages at `node` from per-hand stats weighted by deal reach. */
function summarize(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  node: number,
  hands: [HandStats, HandStats],
): RootSummary {
  const avg = (s: HandStats, xs: number[]) => {
    let num = 0, den = 0;
    for (let h = 0; h < xs.length; h++) (num += s.weights[h] * xs[h]), (den += s.weights[h]);
    return den > 0 ? num / den : 0;
  };
  const actions: string[] = [];
  const frequencies: number[] = [];
  const grid: (number[] | null)[][] = Array.from({ length: 13 }, () => new Array(13).fill(null));
  if (tree.kind[node] === CFR_PLAYER) {
    const A = tree.numChildren[node], H = tree.numHands[tree.player[node]];
    const p = tree.player[node] as 0 | 1;
    const f = tree.firstChild[node];
    for (let c = f; c < f + A; c++) actions.push(tree.label[c]);
    const sig = new Float32Array(A * H);
    policy(node, sig);
    const s = hands[p];
    const cellW: number[][] = Array.from({ length: 169 }, () => new Array(A + 1).fill(0));
    for (let a = 0; a < A; a++) {
      frequencies.push(avg(s, Array.from({ length: H }, (_, h) => sig[a * H + h])));
    }
    const cards = game.cards[p];
    for (let h = 0; h < H; h++) {
      const { row, col } = gridCell(cards[2 * h], cards[2 * h + 1]);
      const cell = cellW[row * 13 + col];
      cell[A] += s.weights[h];
      for (let a = 0; a < A; a++) cell[a] += s.weights[h] * sig[a * H + h];
    }
    for (let i = 0; i < 169; i++) {
      const cell = cellW[i];
      if (cell[A] > 0) grid[Math.floor(i / 13)][i % 13] = cell.slice(0, A).map((x) => x / cell[A]);
    }
  }
  const player = tree.kind[node] !== CFR_PLAYER ? null : tree.player[node] === 0 ? "oop" : "ip";
  return {
    player,
    actions,
    frequencies,
    ev: [avg(hands[0], hands[0].ev), avg(hands[1], hands[1].ev)],
    equity: [avg(hands[0], hands[0].equity), avg(hands[1], hands[1].equity)],
    grid,
    hands,
  };
}

/** A node found from a --node path: its id, the labels as the tree spells them, and notes. */
export interface NodeAtPath {
  node: number;
  path: string[];
  /** One line per card read as its suit-isomorphic representative. */
  notes: string[];
}

/**
 * Finds the node at a comma-separated path of action and card labels (e.g. "Check,Bet 120,As"),
 * reading a card that suit isomorphism merged as the card the tree deals in its place. Needs only
 * the tree, so a path can be checked before the solve. Errors say what is missing after what.
 */
export function findNodeAtPath(tree: PublicTree, game: PostflopGame, text: string): NodeAtPath {
  const steps = text.split(",").map((x) => x.trim()).filter((x) => x !== "");
  const board = [...game.board];
  let node = 0;
  const notes: string[] = [];
  for (let i = 0; i < steps.length; i++) {
    if (tree.kind[node] === CFR_CHANCE && /^[2-9TJQKA][cdhs]$/i.test(steps[i])) {
      const card = parseCard(steps[i], "--node");
      const as = game.dealtAs(board, card);
      if (as !== card) {
        notes.push(
          `${cardName(card)} is solved as ${cardName(as)} (suits ${SUIT_CHARS[card & 3]} and ${
            SUIT_CHARS[as & 3]
          } exchanged in the hand labels)`,
        );
        steps[i] = cardName(as);
      }
      board.push(as);
    }
    try {
      node = findNode(tree, steps.slice(0, i + 1));
    } catch (e) {
      throw new KibitzError("bad_args", `--node "${text}": ${(e as Error).message}`);
    }
  }
  return { node, path: steps, notes };
}

/**
 * Checks before a solve that `dir` can take the results: it is created if missing, must be a
 * folder (not a file), and a file can be created and removed in it.
 */
export async function checkOutputDir(dir: string): Promise<void> {
  const fail = (why: string): never => {
    throw new KibitzError("bad_args", `output directory ${dir}: ${why}`);
  };
  const st = await Deno.stat(dir).catch(() => null);
  if (st && !st.isDirectory) fail("exists and is not a directory");
  if (!st) {
    await Deno.mkdir(dir, { recursive: true }).catch((e) =>
      fail(`cannot be created (${(e as Error).message})`)
    );
  }
  const probe = await Deno.makeTempFile({ dir, prefix: ".kibitz-write-check-" }).catch((e) =>
    fail(`is not writable (${(e as Error).message})`)
  );
  await Deno.remove(probe).catch(() => {});
}

/** The outputs of a solve: result.json's content and solve.bin's. */
export interface SolveOutputs {
  /** result.json: this object, with `nodes` (when given) added as its last key, streamed. */
  result: Record<string, unknown>;
  nodes?: Iterable<unknown>;
  /** solve.bin: its bytes, or a save streamed block by block. */
  save: Uint8Array | StreamedSave;
}

/** result.json in chunks: the object's keys, then "nodes" one node at a time. */
function* resultChunks(out: SolveOutputs): Generator<Uint8Array> {
  const enc = new TextEncoder();
  const head = JSON.stringify(out.result);
  if (!out.nodes) {
    yield enc.encode(head + "\n");
    return;
  }
  yield enc.encode(head === "{}" ? '{"nodes":[' : head.slice(0, -1) + ',"nodes":[');
  let first = true;
  for (const n of out.nodes) {
    yield enc.encode((first ? "" : ",") + JSON.stringify(n));
    first = false;
  }
  yield enc.encode("]}\n");
}

/**
 * Writes result.json and solve.bin into `dir` (atomically, each), streaming both. If that fails
 * (a full disk, a folder removed during the solve), both go to a new folder in the system's temp
 * folder and the error names it: a finished solve is never lost. Returns the folder written.
 */
export async function writeSolveOutputs(dir: string, out: SolveOutputs): Promise<string> {
  const write = async (to: string) => {
    await Deno.mkdir(to, { recursive: true });
    await streamFileAtomic(`${to}/result.json`, resultChunks(out));
    const save = out.save;
    await streamFileAtomic(
      `${to}/solve.bin`,
      save instanceof Uint8Array ? [save] : saveChunks(save),
    );
  };
  try {
    await write(dir);
    return dir;
  } catch (e) {
    const why = (e as Error).message;
    let fallback: string;
    try {
      fallback = await Deno.makeTempDir({ prefix: "kibitz-solve-" });
      await write(fallback);
    } catch (e2) {
      throw new KibitzError(
        "write_failed",
        `cannot write the results to ${dir} (${why}), nor to the temp folder (${
          (e2 as Error).message
        })`,
      );
    }
    throw new KibitzError(
      "write_failed",
      `cannot write the results to ${dir} (${why}); they were saved to ${fallback}/result.json and ${fallback}/solve.bin`,
    );
  }
}

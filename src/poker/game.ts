import { packShared, type SharedTyped } from "../cfr/threads.ts";
import type { CfrChanceOutcome, CfrGame, CfrIsomorph, CfrNode } from "../cfr/game.ts";
import type { PokerTerminalTables } from "../cfr/gpu/tables.ts";
import type { CfrTrainer, TaskTrainer, TrainerStorage } from "../cfr/trainer.ts";
import { CFR_CHANCE, type PublicTree } from "../cfr/tree.ts";
import { PostflopWalk, threadedWalkAvailable, walkAvailable } from "./wasm/walk.ts";
import {
  actionLabel,
  type ActionTree,
  NODE_CHANCE,
  NODE_IP,
  NODE_OOP,
  NODE_SHOWDOWN,
} from "./action_tree.ts";
import { cardName, COMBO_CARDS, comboName } from "./cards.ts";
import { evaluate7 } from "./hand_eval.ts";
import { chanceIsomorphism, swapPermutation, symmetricSuitPairs } from "./isomorphism.ts";
import { rangeHands, type RangeWeights } from "./range.ts";
import {
  TerminalKernels,
  WASM_ENGINE_BYTES,
  wasmEnabled,
  wasmTableBytes,
} from "./wasm/terminal.ts";

/** Options of the postflop game. */
export interface PostflopOptions {
  /** Merge turn/river cards that are the same deal up to a suit exchange (default true). */
  isomorphism?: boolean;
  /**
   * Terminals by the Wasm kernels (src/poker/wasm/, bit-identical to the TypeScript twin here);
   * default: wherever WebAssembly SIMD is available and KIBITZ_WASM is not "0", on the main thread;
   * worker threads inherit the flag with the game's fields and make their own kernels (each copies
   * the tables it touches into its own Wasm memory: estimateKernelBytes per thread).
   */
  wasm?: boolean;
}

/** The Wasm kernels of each game, per thread (kept out of the game's cloneable fields). */
const KERNELS = new WeakMap<PostflopGame, TerminalKernels>();
const IN_WORKER = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !==
  "undefined";

/** A public state of the postflop game: a betting-tree node and the board dealt so far. */
export interface PostflopState {
  node: number;
  board: readonly number[];
}

/** Showdown order of one river board: hands of each player sorted by strength (ascending). */
interface BoardOrder {
  cards: number[];
  /** Hands of each player that hold a board card. */
  dead: [Int32Array, Int32Array];
  order: [Int32Array, Int32Array];
  strength: [Uint16Array, Uint16Array];
  /** The two cards of order[p][i], in the same (strength) order: sequential reads in showdown. */
  c1: [Uint8Array, Uint8Array];
  c2: [Uint8Array, Uint8Array];
  /**
   * Showdown sweep of player p's hands against the other player's (index p): the TypeScript
   * path's; null where the Wasm kernels run the showdowns (they merge the orders instead).
   */
  sweep: [ShowdownSweep, ShowdownSweep] | null;
}

/**
 * Where a showdown's running sums stand for each hand, found once per board so the showdown runs
 * branch-free. The opponent hands (strength order) are summed into flat arrays of running sums:
 * the total after the first j hands (win side, ascending) or the top j hands (lose side, descending),
 * and per card the running sum over the opponent hands holding it, one slot per such hand (slot 0
 * stays 0: "no hand yet"). Hand i of the player then reads its sums over the opponent hands strictly
 * weaker (win) and strictly stronger (lose) from these slots.
 */
interface ShowdownSweep {
  /** Per own hand (strength order): opponent hands strictly weaker; strictly stronger. */
  winCount: Uint16Array;
  loseCount: Uint16Array;
  /** Per own hand: slots of its two cards' running sums (win side, lose side); 0 when none. */
  win1: Uint16Array;
  win2: Uint16Array;
  lose1: Uint16Array;
  lose2: Uint16Array;
  /** Per opponent hand (strength order): slots its two cards write (ascending, descending pass). */
  up1: Uint16Array;
  up2: Uint16Array;
  down1: Uint16Array;
  down2: Uint16Array;
}

/**
 * One player's share of a river board's showdown tables: order (4 B), strength (2), both cards (2)
 * and, for the TypeScript path (`sweep`), sweep slots (6 x 2 as the hand's side, 4 x 2 as the
 * opponent's side) per live hand, 4 B per dead hand, and about 160 B of V8 overhead for each of its
 * 15 typed arrays (5 without the sweep).
 */
function showdownTableBytes(live: number, dead: number, sweep: boolean): number {
  return sweep ? 28 * live + 4 * dead + 15 * 160 : 8 * live + 4 * dead + 5 * 160;
}

/** The sweep of `mine` (strengths ms, cards mc1/mc2) against `theirs` (ts, tc1/tc2), both ascending. */
function showdownSweep(
  ms: Uint16Array,
  mc1: Uint8Array,
  mc2: Uint8Array,
  ts: Uint16Array,
  tc1: Uint8Array,
  tc2: Uint8Array,
): ShowdownSweep {
  const nM = ms.length, nT = ts.length;
  const base = new Int32Array(52), seen = new Int32Array(52);
  for (let k = 0; k < nT; k++) seen[tc1[k]]++, seen[tc2[k]]++;
  // Card c's j-th opponent hand (j >= 1) writes slot base[c] + j - 1; slot 0 is the zero slot.
  for (let c = 0, at = 1; c < 52; c++) base[c] = at, at += seen[c];
  const slot = (c: number) => (seen[c] === 0 ? 0 : base[c] + seen[c] - 1);
  const sw: ShowdownSweep = {
    winCount: new Uint16Array(nM),
    loseCount: new Uint16Array(nM),
    win1: new Uint16Array(nM),
    win2: new Uint16Array(nM),
    lose1: new Uint16Array(nM),
    lose2: new Uint16Array(nM),
    up1: new Uint16Array(nT),
    up2: new Uint16Array(nT),
    down1: new Uint16Array(nT),
    down2: new Uint16Array(nT),
  };
  seen.fill(0);
  for (let k = 0; k < nT; k++) {
    seen[tc1[k]]++, seen[tc2[k]]++;
    sw.up1[k] = slot(tc1[k]), sw.up2[k] = slot(tc2[k]);
  }
  seen.fill(0);
  for (let k = nT - 1; k >= 0; k--) {
    seen[tc1[k]]++, seen[tc2[k]]++;
    sw.down1[k] = slot(tc1[k]), sw.down2[k] = slot(tc2[k]);
  }
  seen.fill(0);
  for (let i = 0, k = 0; i < nM; i++) {
    while (k < nT && ts[k] < ms[i]) seen[tc1[k]]++, seen[tc2[k]]++, k++;
    sw.winCount[i] = k, sw.win1[i] = slot(mc1[i]), sw.win2[i] = slot(mc2[i]);
  }
  seen.fill(0);
  for (let i = nM - 1, k = nT - 1; i >= 0; i--) {
    while (k >= 0 && ts[k] > ms[i]) seen[tc1[k]]++, seen[tc2[k]]++, k--;
    sw.loseCount[i] = nT - 1 - k, sw.lose1[i] = slot(mc1[i]), sw.lose2[i] = slot(mc2[i]);
  }
  return sw;
}

/**
 * Hold'em from the flop, turn or river on the CFR engine. Hands are the range combos that do not
 * touch the starting board; the turn and river are chance nodes with one outcome per card left,
 * each blocking the hands that hold it. Payoffs are net chips relative to each player owning half
 * the pot: the winner gets half the final pot minus the rake, the loser loses half the pot, a tie
 * costs each half the rake (rake = min(pot * rate, cap)).
 */
export class PostflopGame implements CfrGame<PostflopState> {
  readonly name = "holdem";
  readonly numHands: readonly [number, number];
  readonly startingPot: number;
  /** Combo indices of each player's hands. */
  readonly hands: [number[], number[]];
  /** Cards of each player's hands: cards[p][2h], cards[p][2h+1]. */
  readonly cards: [Uint8Array, Uint8Array];
  private readonly weights: [Float32Array, Float32Array];
  /** Index of the same combo in the other player's list (-1 if absent). */
  private readonly sameIn: [Int32Array, Int32Array];
  /** Board order index by the board's card mask (sum of 2^card: exact in a double, 52 bits). */
  private readonly boards = new Map<number, number>();
  private readonly orders: BoardOrder[] = [];
  // Terminal table: node of the betting tree, board order index (-1 for a fold). Per terminal
  // id; JS arrays while the tree expands, typed arrays once it is (compactTables; in shared
  // memory once shareTables ran; typed as number[]: read by index and length only). The pot,
  // rake and folder are the betting node's (nodeHalfPot, nodeRake, tree.folder).
  private tNode: number[] = [];
  private tBoard: number[] = [];
  /** Half the pot and the rake at each betting-tree node (potOf). */
  private readonly nodeHalfPot: Float64Array;
  private readonly nodeRake: Float64Array;
  private readonly cardSum = new Float64Array(52);
  private readonly scratchA: Float64Array;
  /** Suit pairs (4 * s1 + s2) both ranges are symmetric in; all 0 without isomorphism. */
  private readonly symmetric: Uint8Array;
  /** Per board (in deal order): the canonical cards dealt next and their outcomes. */
  private readonly deals = new Map<string, { cards: number[]; outcomes: CfrChanceOutcome[] }>();
  /** Hand permutations per player and suit swap ("p:s1s2"), one array per swap. */
  private readonly perms = new Map<string, Uint32Array>();
  /** Hands of each player holding each card (the hands a dealt card blocks). */
  private readonly holders: [Int32Array[], Int32Array[]];
  /** Opponent reach in a board's strength order (showdown scratch). */
  private sortedReach = new Float64Array(0);
  /** Showdown scratch: running totals and per-card running sums (see ShowdownSweep). */
  private upSum = new Float64Array(0);
  private downSum = new Float64Array(0);
  private upCard = new Float64Array(0);
  private downCard = new Float64Array(0);
  /** Whether the terminals run on the Wasm kernels (PostflopOptions.wasm). */
  readonly wasm: boolean;

  constructor(
    readonly tree: ActionTree,
    readonly board: readonly number[],
    ranges: readonly [RangeWeights, RangeWeights],
    options: PostflopOptions = {},
  ) {
    this.startingPot = tree.config.startingPot;
    this.nodeHalfPot = new Float64Array(tree.size);
    this.nodeRake = new Float64Array(tree.size);
    for (let n = 0; n < tree.size; n++) {
      const { halfPot, rake } = this.potOf(n);
      this.nodeHalfPot[n] = halfPot, this.nodeRake[n] = rake;
    }
    this.wasm = (options.wasm ?? !IN_WORKER) && wasmEnabled();
    this.symmetric = options.isomorphism === false
      ? new Uint8Array(16)
      : symmetricSuitPairs(ranges);
    const h0 = rangeHands(ranges[0], board), h1 = rangeHands(ranges[1], board);
    this.hands = [h0, h1];
    this.numHands = [h0.length, h1.length];
    this.weights = [
      Float32Array.from(h0, (i) => ranges[0][i]),
      Float32Array.from(h1, (i) => ranges[1][i]),
    ];
    const cards = (hs: number[]) => {
      const c = new Uint8Array(2 * hs.length);
      for (let h = 0; h < hs.length; h++) {
        c[2 * h] = COMBO_CARDS[2 * hs[h]];
        c[2 * h + 1] = COMBO_CARDS[2 * hs[h] + 1];
      }
      return c;
    };
    this.cards = [cards(h0), cards(h1)];
    this.holders = [holdersByCard(this.cards[0]), holdersByCard(this.cards[1])];
    this.scratchA = new Float64Array(Math.max(h0.length, h1.length));
    const pos1 = new Map(h1.map((c, i) => [c, i]));
    const pos0 = new Map(h0.map((c, i) => [c, i]));
    this.sameIn = [
      Int32Array.from(h0, (c) => pos1.get(c) ?? -1),
      Int32Array.from(h1, (c) => pos0.get(c) ?? -1),
    ];
  }

  /**
   * CfrSolver's whole training walk on Wasm (wasm/walk.ts, bit-identical to the solver's walk) for
   * a tree of this game, where the terminals run on Wasm; null otherwise.
   */
  trainer(tree: PublicTree, storage?: TrainerStorage): CfrTrainer | null {
    if (!this.wasm || !walkAvailable()) return null;
    try {
      return this.walk(tree, 1, storage);
    } catch (e) {
      if (e instanceof RangeError) return null; // more than a Wasm memory holds (4 GiB)
      throw e;
    }
  }

  /**
   * The Wasm walk on `threads` threads over one shared memory (wasm/walk.ts), for the solver's
   * threaded traversal; null where it cannot run (no shared Wasm memory, no chance node to split at).
   */
  taskTrainer(tree: PublicTree, threads: number, storage?: TrainerStorage): TaskTrainer | null {
    if (!this.wasm || !threadedWalkAvailable() || tree.kind.indexOf(CFR_CHANCE) < 0) return null;
    try {
      return this.walk(tree, threads, storage);
    } catch (e) {
      if (e instanceof RangeError) return null; // more than a Wasm memory holds (4 GiB)
      throw e;
    }
  }

  private walk(tree: PublicTree, threads = 1, storage?: TrainerStorage): PostflopWalk {
    const t = this.terminalTables(); // per-terminal arrays, copied into the walk's memory
    return new PostflopWalk(
      tree,
      {
        numHands: this.numHands,
        cards: this.cards,
        sameIn: this.sameIn,
        boards: this.orders,
        tBoard: t.board,
        tHalfPot: t.halfPot,
        tRake: t.rake,
        tFolder: t.folder,
        initialWeights: [this.weights[0], this.weights[1]],
      },
      threads,
      storage,
    );
  }

  /** Initial range weight of each hand. */
  initialWeights(player: 0 | 1): Float32Array {
    return this.weights[player];
  }

  /** "AsKh". */
  handLabel(player: 0 | 1, hand: number): string {
    const c = this.cards[player];
    return comboName(c[2 * hand], c[2 * hand + 1]);
  }

  /** The root: the first decision on the starting board. */
  root(): PostflopState {
    return { node: 0, board: this.board };
  }

  /** A decision, a card deal (one outcome per card left) or a terminal (numbered on first sight). */
  describe(s: PostflopState): CfrNode {
    const t = this.tree;
    const k = t.kind[s.node];
    if (k === NODE_OOP || k === NODE_IP) {
      const labels: string[] = [];
      for (let c = t.firstChild[s.node]; c < t.firstChild[s.node] + t.numChildren[s.node]; c++) {
        labels.push(actionLabel(t, c));
      }
      return { kind: "player", player: k as 0 | 1, actions: labels };
    }
    if (k === NODE_CHANCE) return { kind: "chance", outcomes: this.deal(s.board).outcomes };
    const id = this.tNode.length;
    if (!Array.isArray(this.tNode)) this.unshareTerminals(); // a tree built after a threaded solve
    this.tNode.push(s.node);
    this.tBoard.push(k === NODE_SHOWDOWN ? this.boardOrder(s.board) : -1);
    return { kind: "terminal", terminal: id };
  }

  /** The state after action `index` or after dealing the index-th card not on the board. */
  child(s: PostflopState, index: number): PostflopState {
    const t = this.tree;
    if (t.kind[s.node] === NODE_CHANCE) {
      // Outcome `index` is the index-th canonical card; the betting tree has one child.
      return { node: t.firstChild[s.node], board: [...s.board, this.deal(s.board).cards[index]] };
    }
    return { node: t.firstChild[s.node] + index, board: s.board };
  }

  private holding(p: 0 | 1, card: number): Int32Array {
    return this.holders[p][card];
  }

  /**
   * The cards dealt next on `board`: one outcome per canonical card, each listing the cards that
   * are the same deal with two suits exchanged (suit isomorphism) and the hand relabelling.
   */
  private deal(board: readonly number[]): { cards: number[]; outcomes: CfrChanceOutcome[] } {
    // Deal order matters beyond the starting board (isomorphism looks at every prefix).
    const key = board.join(",");
    const known = this.deals.get(key);
    if (known) return known;
    const iso = chanceIsomorphism(board, this.symmetric, this.board.length);
    const weight = 1 / (52 - board.length - 4);
    const cards: number[] = [], outcomes: CfrChanceOutcome[] = [];
    for (let card = 0; card < 52; card++) {
      if (iso.representative[card] !== card) continue;
      const isomorphs: CfrIsomorph[] = [];
      for (let twin = 0; twin < 52; twin++) {
        if (twin === card || iso.representative[twin] !== card) continue;
        const s1 = card & 3, s2 = twin & 3;
        isomorphs.push({
          label: cardName(twin),
          weight,
          permutation: [this.permutation(0, s1, s2), this.permutation(1, s1, s2)],
        });
      }
      cards.push(card);
      outcomes.push({
        label: cardName(card),
        weight,
        blocked: [this.holding(0, card), this.holding(1, card)],
        ...(isomorphs.length ? { isomorphs } : {}),
      });
    }
    const d = { cards, outcomes };
    this.deals.set(key, d);
    return d;
  }

  /**
   * The card the tree deals in place of `card` after `board` (in deal order): itself, or the
   * suit-isomorphic card it was merged into.
   */
  dealtAs(board: readonly number[], card: number): number {
    const iso = chanceIsomorphism(board, this.symmetric, this.board.length);
    return iso.representative[card] < 0 ? card : iso.representative[card];
  }

  private permutation(p: 0 | 1, s1: number, s2: number): Uint32Array {
    const key = `${p}:${Math.min(s1, s2)}${Math.max(s1, s2)}`;
    let perm = this.perms.get(key);
    if (!perm) {
      // A hand whose twin is not in the list holds a card dealt earlier on this path (the swap
      // fixes the board), so it is dead here and may map to itself.
      perm = Uint32Array.from(swapPermutation(this.hands[p], s1, s2), (x, h) => (x < 0 ? h : x));
      this.perms.set(key, perm);
    }
    return perm;
  }

  /**
   * Board instances per street relative to the start (1, then the deals after one card, then
   * after two): what the expanded tree multiplies each street's betting nodes by.
   */
  streetMultipliers(): [number, number, number] {
    const first = this.deal(this.board);
    let second = 0;
    if (this.board.length === 3) {
      for (const c of first.cards) second += this.deal([...this.board, c]).cards.length;
    }
    return [1, this.board.length < 5 ? first.cards.length : 0, second];
  }

  /**
   * Bytes of the showdown tables (strength orders and sweeps of every river board) the expanded
   * tree will hold, counted before expansion; one copy per thread, since workers clone the game.
   * With the Wasm path, also the tables' Wasm copy and the Wasm engine itself.
   */
  estimateShowdownBytes(): number {
    const { js, wasm } = this.estimateTableBytes();
    return js + wasm;
  }

  /**
   * The Wasm part of estimateShowdownBytes: what each thread's own terminal kernels hold (their
   * copy of the tables and the engine). Worker threads inherit the `wasm` flag with the game's
   * fields, so each of them holds this once more. 0 on the TypeScript path.
   */
  estimateKernelBytes(): number {
    return this.estimateTableBytes().wasm;
  }

  private estimateTableBytes(): { js: number; wasm: number } {
    const seen = new Set<number>();
    let js = 0, wasm = 0;
    const visit = (board: readonly number[]) => {
      if (board.length < 5) {
        for (const c of this.deal(board).cards) visit([...board, c]);
        return;
      }
      let key = 0;
      for (let i = 0; i < board.length; i++) key += 2 ** board[i];
      if (seen.has(key)) return;
      seen.add(key);
      for (const p of [0, 1] as const) {
        const c = this.cards[p];
        let live = 0;
        for (let h = 0; h < this.numHands[p]; h++) {
          if (!board.includes(c[2 * h]) && !board.includes(c[2 * h + 1])) live++;
        }
        js += showdownTableBytes(live, this.numHands[p] - live, !this.wasm);
        if (this.wasm) wasm += wasmTableBytes(live, this.numHands[p] - live);
      }
    };
    visit(this.board);
    return { js, wasm: this.wasm ? wasm + WASM_ENGINE_BYTES : 0 };
  }

  /**
   * Moves the showdown tables of every river board into one SharedArrayBuffer: worker threads get
   * views of the same memory (structured clone keeps a SharedArrayBuffer shared) instead of a copy
   * each. Boards whose tables are built later stay per thread.
   */
  shareTables(): void {
    // The terminal tables too: as JS arrays every worker would get its own structured-clone copy
    // (F1: 311k terminals, 2.4 MB a worker).
    this.compactTables();
    const t = packShared([this.tNode, this.tBoard].map(
      (a) => a as unknown as SharedTyped,
    )) as unknown as number[][];
    [this.tNode, this.tBoard] = t;
    const SWEEP = [
      "winCount",
      "loseCount",
      "win1",
      "win2",
      "lose1",
      "lose2",
      "up1",
      "up2",
      "down1",
      "down2",
    ] as const;
    const arrays: SharedTyped[] = [];
    for (const bo of this.orders) {
      for (const p of [0, 1] as const) {
        arrays.push(bo.dead[p], bo.order[p], bo.strength[p], bo.c1[p], bo.c2[p]);
        if (bo.sweep) { for (const k of SWEEP) arrays.push(bo.sweep[p][k]); }
      }
    }
    const shared = packShared(arrays);
    let i = 0;
    for (const bo of this.orders) {
      for (const p of [0, 1] as const) {
        bo.dead[p] = shared[i++] as Int32Array;
        bo.order[p] = shared[i++] as Int32Array;
        bo.strength[p] = shared[i++] as Uint16Array;
        bo.c1[p] = shared[i++] as Uint8Array;
        bo.c2[p] = shared[i++] as Uint8Array;
        if (bo.sweep) { for (const k of SWEEP) bo.sweep[p][k] = shared[i++] as Uint16Array; }
      }
    }
  }

  /**
   * The terminal tables as typed arrays, once the tree is expanded: as JS arrays they take more
   * bytes on V8's heap and leave its pages fragmented; `shared`: in SharedArrayBuffers, for a solve
   * whose worker threads view them. A later expansion makes them JS arrays again.
   */
  compactTables(shared = false): void {
    if (!Array.isArray(this.tNode)) return;
    const typed = (a: number[]) => {
      const t = new Int32Array(new (shared ? SharedArrayBuffer : ArrayBuffer)(4 * a.length));
      t.set(a);
      return t as unknown as number[];
    };
    this.tNode = typed(this.tNode);
    this.tBoard = typed(this.tBoard);
  }

  /** Back to growable JS arrays (shareTables made them typed) so that terminals can be added. */
  private unshareTerminals(): void {
    this.tNode = Array.from(this.tNode);
    this.tBoard = Array.from(this.tBoard);
  }

  /** This game's Wasm kernels on this thread, made on first use. */
  private kernels(): TerminalKernels {
    let k = KERNELS.get(this);
    if (!k) {
      k = new TerminalKernels(this.numHands, this.cards, this.sameIn);
      KERNELS.set(this, k);
    }
    return k;
  }

  /**
   * Bytes the showdown tables built so far hold, with their Wasm copy (made on first use) and the
   * Wasm engine (WASM_ENGINE_BYTES) when the Wasm path is on.
   */
  showdownBytes(): number {
    let bytes = 0;
    for (const bo of this.orders) {
      for (const p of [0, 1] as const) {
        bytes += showdownTableBytes(bo.order[p].length, bo.dead[p].length, !this.wasm);
        if (this.wasm) bytes += wasmTableBytes(bo.order[p].length, bo.dead[p].length);
      }
    }
    return bytes + (this.wasm ? WASM_ENGINE_BYTES : 0);
  }

  private boardOrder(board: readonly number[]): number {
    let key = 0;
    for (let i = 0; i < board.length; i++) key += 2 ** board[i];
    const known = this.boards.get(key);
    if (known !== undefined) return known;
    const [b0, b1, b2, b3, b4] = board;
    const onBoard = new Uint8Array(52);
    for (const x of board) onBoard[x] = 1;
    const make = (p: 0 | 1) => {
      const c = this.cards[p], H = this.numHands[p];
      // Live hands keyed strength * 2^16 + hand, sorted as numbers: ascending strength, ties in
      // hand order (the stable sort by strength of the hands in order, without a comparator).
      const keys = new Float64Array(H), dead: number[] = [];
      let n = 0;
      for (let h = 0; h < H; h++) {
        const x = c[2 * h], y = c[2 * h + 1];
        if (onBoard[x] | onBoard[y]) {
          dead.push(h);
          continue;
        }
        keys[n++] = evaluate7(b0, b1, b2, b3, b4, x, y) * 65536 + h;
      }
      const sorted = keys.subarray(0, n).sort();
      const order = new Int32Array(n), strength = new Uint16Array(n);
      const c1 = new Uint8Array(n), c2 = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const k = sorted[i], h = k % 65536;
        order[i] = h, strength[i] = (k - h) / 65536, c1[i] = c[2 * h], c2[i] = c[2 * h + 1];
      }
      return { order, strength, dead: Int32Array.from(dead), c1, c2 };
    };
    const m0 = make(0), m1 = make(1);
    this.orders.push({
      cards: [...board],
      dead: [m0.dead, m1.dead],
      order: [m0.order, m1.order],
      strength: [m0.strength, m1.strength],
      c1: [m0.c1, m1.c1],
      c2: [m0.c2, m1.c2],
      sweep: this.wasm ? null : [
        showdownSweep(m0.strength, m0.c1, m0.c2, m1.strength, m1.c1, m1.c2),
        showdownSweep(m1.strength, m1.c1, m1.c2, m0.strength, m0.c1, m0.c2),
      ],
    });
    this.boards.set(key, this.orders.length - 1);
    return this.orders.length - 1;
  }

  /** Opponent reach sharing no card with each hand (inclusion-exclusion over the two cards). */
  compatibleSums(player: 0 | 1, oppReach: Float32Array, out: Float32Array): void {
    this.foldLike(player, oppReach, out, 0, 1);
  }

  /** out[off+h] = scale * (sum of oppReach over opponent hands sharing no card with h). */
  private foldLike(p: 0 | 1, opp: Float32Array, out: Float32Array, off: number, scale: number) {
    if (this.wasm) return this.kernels().fold(p, opp, out, off, scale);
    const o = (1 - p) as 0 | 1;
    const oc = this.cards[o], pc = this.cards[p];
    const cs = this.cardSum;
    cs.fill(0);
    let total = 0;
    for (let i = 0; i < this.numHands[o]; i++) {
      const r = opp[i];
      if (r === 0) continue;
      total += r;
      cs[oc[2 * i]] += r;
      cs[oc[2 * i + 1]] += r;
    }
    const same = this.sameIn[p];
    for (let h = 0; h < this.numHands[p]; h++) {
      const j = same[h];
      const v = total - cs[pc[2 * h]] - cs[pc[2 * h + 1]] + (j >= 0 ? opp[j] : 0);
      out[off + h] = scale * v;
    }
  }

  /**
   * Read-only views of the terminal and showdown tables, for a GPU backend that evaluates the
   * terminals itself: per terminal id its river board order (-1 for a fold), half pot, rake and
   * folder; per board order each player's live hands in ascending strength; per hand the index of
   * the same combo in the other player's list (-1 if absent).
   */
  terminalTables(): PokerTerminalTables {
    const tn = this.tNode, folder = this.tree.folder;
    return {
      board: this.tBoard,
      halfPot: Float64Array.from(tn, (n) => this.nodeHalfPot[n]) as unknown as number[],
      rake: Float64Array.from(tn, (n) => this.nodeRake[n]) as unknown as number[],
      folder: Int32Array.from(tn, (n) => folder[n]) as unknown as number[],
      orders: this.orders,
      sameIn: this.sameIn,
    };
  }

  /** Rake and half pot of a terminal's betting-tree node. */
  potOf(node: number): { halfPot: number; rake: number } {
    const cfg = this.tree.config;
    const pot = cfg.startingPot + 2 * this.tree.amount[node];
    return { halfPot: pot / 2, rake: Math.min(pot * cfg.rakeRate, cfg.rakeCap) };
  }

  /** Fold or showdown values of every hand of `player` against `oppReach`, in O(hands). */
  terminalValues(
    terminal: number,
    player: 0 | 1,
    oppReach: Float32Array,
    out: Float32Array,
    outOffset: number,
  ): void {
    const node = this.tNode[terminal];
    const halfPot = this.nodeHalfPot[node], rake = this.nodeRake[node];
    const board = this.tBoard[terminal];
    if (board < 0) {
      const win = this.tree.folder[node] !== player;
      this.foldLike(player, oppReach, out, outOffset, win ? halfPot - rake : -halfPot);
      return;
    }
    this.showdown(board, player, oppReach, out, outOffset, halfPot - rake, -halfPot, -rake / 2);
  }

  /** Pot share each hand of `player` wins at a terminal (fold 1 or 0, showdown 1 / 0.5 / 0). */
  terminalEquity(
    terminal: number,
    player: 0 | 1,
    oppReach: Float32Array,
    out: Float32Array,
    outOffset: number,
  ): void {
    const board = this.tBoard[terminal];
    if (board < 0) {
      const win = this.tree.folder[this.tNode[terminal]] !== player;
      this.foldLike(player, oppReach, out, outOffset, win ? 1 : 0);
      return;
    }
    this.showdown(board, player, oppReach, out, outOffset, 1, 0, 0.5);
  }

  /**
   * Showdown values in O(hands): running sums of the opponent reach over the strength-sorted
   * opponent hands (ascending for wins, descending for losses), per card as well, minus those
   * sharing a card with the hand. The board's sweep says where each hand's sums stand, so the
   * passes have no data-dependent branches; every sum is the same f64 running sum in the same order.
   */
  showdown(
    boardIndex: number,
    p: 0 | 1,
    opp: Float32Array,
    out: Float32Array,
    off: number,
    payWin: number,
    payLose: number,
    payTie: number,
  ): void {
    const o = (1 - p) as 0 | 1;
    const bo = this.orders[boardIndex];
    if (this.wasm) {
      const k = this.kernels();
      if (!k.tables(boardIndex, p)) {
        const side = (q: 0 | 1) => ({
          order: bo.order[q],
          strength: bo.strength[q],
          c1: bo.c1[q],
          c2: bo.c2[q],
          dead: bo.dead[q],
        });
        k.addTables(boardIndex, [side(0), side(1)]);
      }
      return k.showdown(k.tables(boardIndex, p), p, opp, out, off, payWin, payLose, payTie);
    }
    const mine = bo.order[p], nM = mine.length;
    const theirs = bo.order[o], nT = theirs.length;
    const mc1 = bo.c1[p], mc2 = bo.c2[p], tc1 = bo.c1[o], tc2 = bo.c2[o];
    const sw = bo.sweep![p]; // built whenever the TypeScript path runs (this.wasm false)
    const cs = this.cardSum;
    if (this.sortedReach.length < nT) {
      // Scratch: reach in strength order, totals after j hands, per-card slots (1 + 2 per hand).
      this.sortedReach = new Float64Array(nT);
      this.upSum = new Float64Array(nT + 1);
      this.downSum = new Float64Array(nT + 1);
      this.upCard = new Float64Array(1 + 2 * nT);
      this.downCard = new Float64Array(1 + 2 * nT);
    }
    const or = this.sortedReach, up = this.upSum, down = this.downSum;
    const upCard = this.upCard, downCard = this.downCard;
    // Ascending: opponent reach gathered into strength order, running total and per-card sums.
    const up1 = sw.up1, up2 = sw.up2;
    cs.fill(0);
    let sum = 0;
    for (let k = 0; k < nT; k++) {
      const r = opp[theirs[k]];
      or[k] = r;
      sum += r;
      up[k + 1] = sum;
      const a = tc1[k], b = tc2[k];
      const x = cs[a] + r;
      cs[a] = x;
      upCard[up1[k]] = x;
      const y = cs[b] + r;
      cs[b] = y;
      upCard[up2[k]] = y;
    }
    // Compatible totals per hand (for ties, which only pay when there is rake) come from the
    // fold formula over the board's hands.
    const compat = this.scratchA;
    const withTies = payTie !== 0;
    if (withTies) {
      cs.fill(0);
      let total = 0;
      for (let i = 0; i < nT; i++) {
        const r = or[i];
        total += r;
        cs[tc1[i]] += r;
        cs[tc2[i]] += r;
      }
      const same = this.sameIn[p];
      for (let i = 0; i < nM; i++) {
        const j = same[mine[i]];
        compat[i] = total - cs[mc1[i]] - cs[mc2[i]] + (j >= 0 ? opp[j] : 0);
      }
    }
    // Descending: the same sums from the strongest hand down.
    const down1 = sw.down1, down2 = sw.down2;
    cs.fill(0);
    sum = 0;
    for (let k = nT - 1, j = 1; k >= 0; k--, j++) {
      const r = or[k];
      sum += r;
      down[j] = sum;
      const a = tc1[k], b = tc2[k];
      const x = cs[a] + r;
      cs[a] = x;
      downCard[down1[k]] = x;
      const y = cs[b] + r;
      cs[b] = y;
      downCard[down2[k]] = y;
    }
    // Wins: opponent hands strictly weaker; losses: strictly stronger (slot 0 reads 0).
    const wc = sw.winCount, lc = sw.loseCount;
    const w1 = sw.win1, w2 = sw.win2, l1 = sw.lose1, l2 = sw.lose2;
    upCard[0] = 0, downCard[0] = 0, up[0] = 0, down[0] = 0;
    for (let i = 0; i < nM; i++) {
      const win = up[wc[i]] - upCard[w1[i]] - upCard[w2[i]];
      const lose = down[lc[i]] - downCard[l1[i]] - downCard[l2[i]];
      let v = payWin * win + payLose * lose;
      if (withTies) v += payTie * (compat[i] - win - lose);
      out[off + mine[i]] = v;
    }
    // Hands that conflict with the board get 0 (the engine ignores them).
    const dead = bo.dead[p];
    for (let i = 0; i < dead.length; i++) out[off + dead[i]] = 0;
  }

  /**
   * Raw all-in equity of each hand of `player` (share of the pot at showdown with no more betting,
   * ties split), averaged over every runout and over opponent hands weighted by `oppWeights`
   * (default: the opponent's range), on `board` (default: the starting board).
   */
  equity(player: 0 | 1, oppWeights?: Float32Array, board?: readonly number[]): Float32Array {
    const start = board ?? this.board;
    const H = this.numHands[player];
    const num = new Float64Array(H), den = new Float64Array(H);
    const opp = oppWeights ?? this.initialWeights((1 - player) as 0 | 1);
    const tmp = new Float32Array(H), cmp = new Float32Array(H);
    const reach = new Float32Array(opp.length);
    const onBoard = new Uint8Array(52); // 1 for the runout's board cards (a lookup per hand card)
    const runout = (board: number[]) => {
      const bi = this.boardOrder(board);
      for (const c of board) onBoard[c] = 1;
      reach.set(opp);
      const oc = this.cards[1 - player];
      for (let j = 0; j < opp.length; j++) {
        if (onBoard[oc[2 * j]] | onBoard[oc[2 * j + 1]]) reach[j] = 0;
      }
      this.showdown(bi, player, reach, tmp, 0, 1, 0, 0.5);
      this.foldLike(player, reach, cmp, 0, 1);
      const pc = this.cards[player];
      for (let h = 0; h < H; h++) {
        if (onBoard[pc[2 * h]] | onBoard[pc[2 * h + 1]]) continue;
        num[h] += tmp[h];
        den[h] += cmp[h];
      }
      for (const c of board) onBoard[c] = 0;
    };
    // Every runout once, as an unordered set of the missing board cards.
    if (start.length === 5) runout([...start]);
    else {
      for (let c = 0; c < 52; c++) {
        if (start.includes(c)) continue;
        if (start.length === 4) runout([...start, c]);
        else {
          for (let d = c + 1; d < 52; d++) {
            if (!start.includes(d)) runout([...start, c, d]);
          }
        }
      }
    }
    return Float32Array.from(num, (x, h) => (den[h] > 0 ? x / den[h] : 0));
  }
}

function holdersByCard(cards: Uint8Array): Int32Array[] {
  const lists: number[][] = Array.from({ length: 52 }, () => []);
  for (let h = 0; 2 * h < cards.length; h++) {
    lists[cards[2 * h]].push(h);
    lists[cards[2 * h + 1]].push(h);
  }
  return lists.map((l) => Int32Array.from(l));
}

/**
 * The postflop game as multi-threaded solves use it: the CFR engine's worker threads rebuild it
 * from this module (every own field is plain cloneable data, built before the workers start).
 */
export class WorkerPostflopGame extends PostflopGame {
  /** Where worker threads find this class. */
  workerSource(): { module: string; name: string } {
    return { module: import.meta.url, name: "WorkerPostflopGame" };
  }
}

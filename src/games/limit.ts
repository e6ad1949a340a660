import { KibitzError } from "../errors.ts";
import type { CfrChanceOutcome, CfrGame, CfrNode } from "../cfr/game.ts";

/**
 * Rules of a small limit-poker game with one private card per player and at most one public card:
 * the family that holds Kuhn poker and Leduc hold'em. Card c has rank floor(c / suits).
 */
export interface LimitPokerRules {
  name: string;
  ranks: number;
  suits: number;
  /** Chips each player antes. */
  ante: number;
  /** Fixed bet/raise size of each betting round; one public card is dealt before every round after the first. */
  betSizes: readonly number[];
  /** Bets plus raises allowed per round. */
  maxRaises: number;
  /**
   * Deal the first public card through suit isomorphism: only suit 0 of each rank is built, the other
   * suits are its isomorphs (exact here because every range is uniform over suits).
   */
  isomorphic?: boolean;
  /** Rank symbols (low to high) and suit symbols, for labels. */
  rankNames: string;
  suitNames: string;
}

/** A public state: the betting so far, the board card and whose turn it is. */
export interface LimitState {
  round: number;
  board: number;
  contrib: [number, number];
  raises: number;
  toAct: 0 | 1;
  /** Actions of the current round ("" at its start). */
  roundActions: string;
  /** Set when the state is a chance node (the round just closed and another follows). */
  dealing: boolean;
  /** Set when the state is terminal; -1 otherwise, else the folder (0/1) or 2 for a showdown. */
  end: number;
}

/** A terminal's record. */
interface Terminal {
  /** 0/1 = that player folded, 2 = showdown. */
  end: number;
  contrib: [number, number];
  board: number;
}

/** Kuhn, Leduc and their relatives as a CfrGame: hands are card indices 0..ranks*suits-1. */
export class LimitPokerGame implements CfrGame<LimitState> {
  readonly name: string;
  readonly numHands: readonly [number, number];
  readonly startingPot: number;
  readonly rules: LimitPokerRules;
  private readonly cards: number;
  private readonly terminals: Terminal[] = [];
  private readonly sumRank: Float64Array;
  private readonly suitSwaps: Uint32Array[];

  constructor(rules: LimitPokerRules) {
    if (rules.ranks < 2 || rules.suits < 1 || rules.betSizes.length < 1 || rules.maxRaises < 1) {
      throw new KibitzError("bad_game", `${rules.name}: invalid rules ${JSON.stringify(rules)}`);
    }
    this.rules = rules;
    this.name = rules.name;
    this.cards = rules.ranks * rules.suits;
    const publicCards = rules.betSizes.length - 1;
    if (this.cards < 2 + publicCards) {
      throw new KibitzError("bad_game", `${rules.name}: deck too small`);
    }
    this.numHands = [this.cards, this.cards];
    this.startingPot = 2 * rules.ante;
    this.sumRank = new Float64Array(rules.ranks);
    // suitSwaps[k]: the card permutation exchanging suit 0 and suit k.
    this.suitSwaps = Array.from(
      { length: rules.suits },
      (_, k) =>
        Uint32Array.from({ length: this.cards }, (_, c) => {
          const suit = c % rules.suits, base = c - suit;
          return suit === 0 ? base + k : suit === k ? base : c;
        }),
    );
  }

  /** Display name of a card, e.g. "Kh" (just the rank with one suit). */
  cardLabel(card: number): string {
    const r = this.rules;
    const rank = r.rankNames[Math.floor(card / r.suits)];
    return r.suits === 1 ? rank : rank + r.suitNames[card % r.suits];
  }

  /** Display name of a hand (its card). */
  handLabel(_player: 0 | 1, hand: number): string {
    return this.cardLabel(hand);
  }

  /** Every card dealt with weight 1. */
  initialWeights(_player: 0 | 1): Float32Array {
    return new Float32Array(this.cards).fill(1);
  }

  /** The root: antes in, player 0 to act in round 0. */
  root(): LimitState {
    const a = this.rules.ante;
    return {
      round: 0,
      board: -1,
      contrib: [a, a],
      raises: 0,
      toAct: 0,
      roundActions: "",
      dealing: false,
      end: -1,
    };
  }

  /** Player node (check/bet or fold/call/raise), chance node (board card) or terminal. */
  describe(s: LimitState): CfrNode {
    if (s.end >= 0) {
      this.terminals.push({ end: s.end, contrib: [s.contrib[0], s.contrib[1]], board: s.board });
      return { kind: "terminal", terminal: this.terminals.length - 1 };
    }
    if (s.dealing) {
      const weight = 1 / (this.cards - 2 - (s.board >= 0 ? 1 : 0));
      const outcomes: CfrChanceOutcome[] = [];
      const suits = this.rules.suits;
      if (this.rules.isomorphic && s.board < 0) {
        for (let c = 0; c < this.cards; c += suits) {
          const isomorphs = [];
          for (let k = 1; k < suits; k++) {
            const perm = this.suitSwaps[k];
            isomorphs.push({
              label: this.cardLabel(c + k),
              weight,
              permutation: [perm, perm] as const,
            });
          }
          outcomes.push({ label: this.cardLabel(c), weight, blocked: [[c], [c]], isomorphs });
        }
        return { kind: "chance", outcomes };
      }
      for (let c = 0; c < this.cards; c++) {
        if (c === s.board) continue;
        outcomes.push({ label: this.cardLabel(c), weight, blocked: [[c], [c]] });
      }
      return { kind: "chance", outcomes };
    }
    const facing = s.contrib[0] !== s.contrib[1];
    const actions = facing
      ? (s.raises < this.rules.maxRaises ? ["f", "c", "r"] : ["f", "c"])
      : ["k", "b"];
    return { kind: "player", player: s.toAct, actions };
  }

  /** Applies action `index` of describe(s) (or deals outcome `index`). */
  child(s: LimitState, index: number): LimitState {
    if (s.dealing) {
      let card = index;
      if (this.rules.isomorphic && s.board < 0) card = index * this.rules.suits;
      else if (s.board >= 0 && card >= s.board) card++;
      return { ...s, board: card, dealing: false, raises: 0, toAct: 0, roundActions: "" };
    }
    const node = this.describe(s);
    if (node.kind !== "player") throw new KibitzError("bad_state", `${this.name}: no action here`);
    const act = node.actions[index];
    const me = s.toAct, other = (1 - me) as 0 | 1;
    const contrib: [number, number] = [s.contrib[0], s.contrib[1]];
    const next: LimitState = { ...s, contrib, toAct: other, roundActions: s.roundActions + act };
    const size = this.rules.betSizes[s.round];
    const lastRound = s.round === this.rules.betSizes.length - 1;
    const closeRound = () => {
      if (lastRound) next.end = 2;
      else next.dealing = true, next.round = s.round + 1;
    };
    switch (act) {
      case "f":
        next.end = me;
        break;
      case "k":
        if (s.roundActions.length > 0) closeRound();
        break;
      case "c":
        contrib[me] = contrib[other];
        closeRound();
        break;
      case "b":
      case "r":
        contrib[me] = contrib[other] + size;
        next.raises = s.raises + 1;
        break;
    }
    return next;
  }

  /** The terminal's record: who folded (0/1) or 2 for a showdown, contributions and board card. */
  terminalInfo(
    terminal: number,
  ): Readonly<{ end: number; contrib: [number, number]; board: number }> {
    const t = this.terminals[terminal];
    if (!t) throw new KibitzError("bad_terminal", `${this.name}: no terminal ${terminal}`);
    return t;
  }

  /** out[h] = total opponent reach on cards other than h (both hold one card). */
  compatibleSums(_player: 0 | 1, oppReach: Float32Array, out: Float32Array): void {
    let total = 0;
    for (let o = 0; o < this.cards; o++) total += oppReach[o];
    for (let h = 0; h < this.cards; h++) out[h] = total - oppReach[h];
  }

  /** Pot share: 1 / 0 at a fold, 1 / 0.5 / 0 at a showdown (O(n), via terminalValues' arithmetic). */
  terminalEquity(
    terminal: number,
    player: 0 | 1,
    oppReach: Float32Array,
    out: Float32Array,
    outOffset: number,
  ): void {
    const t = this.terminals[terminal];
    let total = 0;
    for (let o = 0; o < this.cards; o++) total += oppReach[o];
    if (t.end !== 2) {
      const share = t.end === player ? 0 : 1;
      for (let h = 0; h < this.cards; h++) out[outOffset + h] = share * (total - oppReach[h]);
      return;
    }
    // At a showdown value = pot * (win - lose) and win + tie + lose = mass, so share = (mass + value / pot) / 2.
    this.terminalValues(terminal, player, oppReach, out, outOffset);
    const pot = t.contrib[0];
    for (let h = 0; h < this.cards; h++) {
      out[outOffset + h] = (total - oppReach[h] + out[outOffset + h] / pot) / 2;
    }
  }

  /** Fold: the folder loses its contribution. Showdown: pair with the board, else higher rank. O(n). */
  terminalValues(
    terminal: number,
    player: 0 | 1,
    oppReach: Float32Array,
    out: Float32Array,
    outOffset: number,
  ): void {
    const t = this.terminals[terminal];
    const n = this.cards, suits = this.rules.suits;
    let total = 0;
    for (let o = 0; o < n; o++) total += oppReach[o];
    if (t.end !== 2) {
      const pay = t.end === player ? -t.contrib[player] : t.contrib[1 - player];
      for (let h = 0; h < n; h++) out[outOffset + h] = pay * (total - oppReach[h]);
      return;
    }
    const pot = t.contrib[0];
    const sum = this.sumRank.fill(0);
    for (let o = 0; o < n; o++) sum[Math.floor(o / suits)] += oppReach[o];
    const br = t.board >= 0 ? Math.floor(t.board / suits) : -1;
    // A pair with the board beats every non-pair; otherwise the higher rank wins.
    for (let h = 0; h < n; h++) {
      const r = Math.floor(h / suits);
      let v: number;
      if (r === br) v = total - sum[r];
      else {
        let below = 0;
        for (let q = 0; q < r; q++) if (q !== br) below += sum[q];
        const above = total - below - sum[r];
        v = below - above;
      }
      out[outOffset + h] = pot * v;
    }
  }
}

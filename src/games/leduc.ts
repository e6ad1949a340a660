import { LimitPokerGame } from "./limit.ts";

/**
 * Leduc hold'em: 6 cards (J, Q, K in two suits), ante 1, one private card each, a public card after
 * round 1; raises of 2 then 4, at most 2 bets/raises per round; a pair with the board wins. With
 * `isomorphic`, the public card is dealt through suit isomorphism (3 subtrees instead of 6).
 */
export function leducGame(options: { isomorphic?: boolean } = {}): LimitPokerGame {
  return new LimitPokerGame({
    name: "leduc",
    ranks: 3,
    suits: 2,
    ante: 1,
    betSizes: [2, 4],
    maxRaises: 2,
    rankNames: "JQK",
    suitNames: "sh",
    isomorphic: options.isomorphic ?? false,
  });
}

/** Exact value of Leduc hold'em for the first player (linear-programming solve, REFERENCE.md). */
export const LEDUC_VALUE = -0.085606424078;
/** NashConv of the uniform strategy in Leduc hold'em (REFERENCE.md). */
export const LEDUC_UNIFORM_NASHCONV = 4.747222222222222;

import { LimitPokerGame } from "./limit.ts";

/** Kuhn poker: cards J, Q, K; ante 1; one round, bet 1, no raises. Game value for player 1: -1/18. */
export function kuhnGame(): LimitPokerGame {
  return new LimitPokerGame({
    name: "kuhn",
    ranks: 3,
    suits: 1,
    ante: 1,
    betSizes: [1],
    maxRaises: 1,
    rankNames: "JQK",
    suitNames: "s",
  });
}

/** Exact value of Kuhn poker for the first player (REFERENCE.md). */
export const KUHN_VALUE = -1 / 18;
/** NashConv (sum of both best-response gains) of the uniform strategy in Kuhn poker. */
export const KUHN_UNIFORM_NASHCONV = 11 / 12;

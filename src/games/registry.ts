import { KibitzError } from "../errors.ts";
import { KUHN_VALUE, kuhnGame } from "./kuhn.ts";
import { LEDUC_VALUE, leducGame } from "./leduc.ts";
import type { LimitPokerGame } from "./limit.ts";

/** A small game with its exact value for player 1 and default iterations for the cfr task. */
export interface SmallGameEntry {
  make: () => LimitPokerGame;
  value: number;
  iterations: number;
}

/** The small oracle games by name. */
export const SMALL_GAMES: Readonly<Record<string, SmallGameEntry>> = {
  kuhn: { make: kuhnGame, value: KUHN_VALUE, iterations: 1000 },
  leduc: { make: leducGame, value: LEDUC_VALUE, iterations: 1000 },
};

/** Looks up a small game by name, throwing a KibitzError that lists the valid names. */
export function smallGame(name: string): SmallGameEntry {
  const g = SMALL_GAMES[name];
  if (!g) {
    throw new KibitzError(
      "bad_game",
      `unknown game "${name}"; valid: ${Object.keys(SMALL_GAMES).join(", ")}`,
    );
  }
  return g;
}

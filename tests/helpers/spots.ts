import type { CfrGame } from "../../src/cfr/game.ts";
import type { PublicTree } from "../../src/cfr/tree.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { expandSpot, prepareSpot } from "../../src/poker/solve.ts";

/** A small turn spot (narrow ranges, minimal bet sizes) for tests that need a real postflop tree. */
export const SMALL_TURN_SPOT = `
[ranges]
oop = "QQ+,AK,T9s"
ip = "JJ-99,AQs,KQ"
[cards]
flop = "Td9d6h"
turn = "Qc"
[tree]
starting_pot = 200
effective_stack = 900
[bet_sizes]
turn = "minimal"
river = "minimal"
`;

/** The expanded public tree and the game of a spot config, for engine-level tests. */
export function spotTree(text: string): { tree: PublicTree; game: CfrGame } {
  const spot = prepareSpot(parseSolveConfig(text));
  return { tree: expandSpot(spot), game: spot.game };
}

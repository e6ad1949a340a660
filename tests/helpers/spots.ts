import type { CfrGame } from "../../src/cfr/game.ts";
import { buildTree, type PublicTree } from "../../src/cfr/tree.ts";
import { buildActionTree, type TreeConfig } from "../../src/poker/action_tree.ts";
import { parseBetSizes } from "../../src/poker/bet_size.ts";
import { parseCards } from "../../src/poker/cards.ts";
import { PostflopGame, WorkerPostflopGame } from "../../src/poker/game.ts";
import { parseRange } from "../../src/poker/range.ts";
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

/**
 * A turn or river spot with two bet sizes on every street and mixed ranges (rake optional), built
 * directly from a tree config: the spot the Wasm kernel and walk parity tests compare on.
 */
export function wasmParitySpot(
  board: string,
  rake: boolean,
  wasm = true,
  threaded = false,
): { game: PostflopGame; tree: PublicTree } {
  const s = parseBetSizes("50%, 100%", "60%");
  const cards = parseCards(board);
  const cfg: TreeConfig = {
    startingStreet: (cards.length - 3) as 0 | 1 | 2,
    startingPot: 100,
    effectiveStack: 150,
    rakeRate: rake ? 0.05 : 0,
    rakeCap: rake ? 3 : 0,
    betSizes: [[s, s], [s, s], [s, s]],
    donkSizes: [null, null],
    addAllinThreshold: 0,
    forceAllinThreshold: 0,
    mergingThreshold: 0,
  };
  // WorkerPostflopGame: the TypeScript threaded path's worker threads can rebuild it.
  const g = new (threaded ? WorkerPostflopGame : PostflopGame)(buildActionTree(cfg), cards, [
    parseRange("22+,A2s+,K9o+,QTs+,76s,65s"),
    parseRange("TT-44,AQo+,KTs+,T9s:0.5,98s,AhKh"),
  ], { wasm });
  return { game: g, tree: buildTree(g) };
}

/**
 * The warm-start tests' river spot (Ah7d2c 9s 3h, pot 100, stack 200) with the given river sizes for
 * both players; `extra` goes at the end of its [tree] table.
 */
export function riverSpot(bet: string, raise: string, extra = ""): string {
  return `[ranges]
oop = "AA,KK,QQ,AKs,54s"
ip = "KK-JJ,AQs,T9s"
[cards]
flop = "Ah7d2c"
turn = "9s"
river = "3h"
[tree]
starting_pot = 100
effective_stack = 200
${extra}
[bet_sizes.river]
oop_bet = "${bet}"
oop_raise = "${raise}"
ip_bet = "${bet}"
ip_raise = "${raise}"
`;
}

/** A spot config's parsed config, game and public tree (without the solver's preparation). */
export function configSpot(text: string) {
  const config = parseSolveConfig(text);
  const game = new PostflopGame(buildActionTree(config.tree), config.board, config.rangeWeights);
  return { config, game, tree: buildTree(game) };
}

/** A turn spot that warm starts (regret transfer, W = 10) from 20 small-tree iterations. */
export const TURN_WS = `[ranges]
oop = "AA,KK,QQ,AKs,54s,JTs"
ip = "KK-JJ,AQs,T9s,87s"
[cards]
flop = "Ah7d2c"
turn = "9s"
[tree]
starting_pot = 100
effective_stack = 200
[bet_sizes.turn]
oop_bet = "33%, 66%, 100%, a"
oop_raise = "2.5x"
ip_bet = "33%, 66%, 100%, a"
ip_raise = "2.5x"
[bet_sizes.river]
oop_bet = "33%, 66%, 100%, a"
oop_raise = "2.5x"
ip_bet = "33%, 66%, 100%, a"
ip_raise = "2.5x"
[solver]
max_iterations = 40
target_exploitability_pct = 0.5
threads = 1
use_warmstart = true
warmstart_method = "regrets"
warmstart_weight = 10
warmstart_minimal_max_iters = 20
warmstart_minimal_exploitability_pct = 0
`;

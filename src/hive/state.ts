// Game states, numbered and named as the Universal Hive Protocol names them.

/** Game states (STATE_NAMES gives the UHP GameStateString). */
export const NOT_STARTED = 0, IN_PROGRESS = 1, DRAW = 2, WHITE_WINS = 3, BLACK_WINS = 4;
/** UHP GameStateString for each state. */
export const STATE_NAMES: readonly string[] = [
  "NotStarted",
  "InProgress",
  "Draw",
  "WhiteWins",
  "BlackWins",
];

/**
 * A game's outcome for the player of `color` (0 White, 1 Black), read from the position's state and
 * never from who moved last (a move may surround the mover's own queen, or both queens at once):
 * 1 won, -1 lost, 0 drawn, null while the game is not over.
 */
export function outcomeFor(state: number, color: number): 1 | 0 | -1 | null {
  if (state === DRAW) return 0;
  if (state === WHITE_WINS) return color === 0 ? 1 : -1;
  if (state === BLACK_WINS) return color === 1 ? 1 : -1;
  return null;
}

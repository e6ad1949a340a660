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

// Public API of the Hive rules engine. Names carry a Hive prefix so that they never collide with
// other areas in the root mod.ts. Start with `HiveGame` (see its doc comment).
export { HiveGame } from "./game.ts";
export type { PieceOnBoard as HivePieceOnBoard } from "./game.ts";
export {
  BLACK_WINS as HIVE_BLACK_WINS,
  DRAW as HIVE_DRAW,
  IN_PROGRESS as HIVE_IN_PROGRESS,
  NOT_STARTED as HIVE_NOT_STARTED,
  outcomeFor as hiveOutcomeFor,
  STATE_NAMES as HIVE_STATE_NAMES,
  WHITE_WINS as HIVE_WHITE_WINS,
} from "./state.ts";
export {
  makeMove as makeHiveMove,
  movePiece as hiveMovePiece,
  moveTo as hiveMoveTo,
  PASS as HIVE_PASS,
} from "./move.ts";
export type { HiveMove } from "./move.ts";
export {
  ANT as HIVE_ANT,
  BEETLE as HIVE_BEETLE,
  BLACK as HIVE_BLACK,
  EXP_L as HIVE_EXP_L,
  EXP_M as HIVE_EXP_M,
  EXP_P as HIVE_EXP_P,
  GAME_TYPES as HIVE_GAME_TYPES,
  gameTypeString as hiveGameTypeString,
  GRASSHOPPER as HIVE_GRASSHOPPER,
  LADYBUG as HIVE_LADYBUG,
  MOSQUITO as HIVE_MOSQUITO,
  NUM_PIECES as HIVE_NUM_PIECES,
  parseGameType as parseHiveGameType,
  parsePieceName as parseHivePieceName,
  PIECE_BUG as HIVE_PIECE_BUG,
  PIECE_COLOR as HIVE_PIECE_COLOR,
  pieceEnabled as hivePieceEnabled,
  pieceName as hivePieceName,
  PIECES_PER_COLOR as HIVE_PIECES_PER_COLOR,
  PILLBUG as HIVE_PILLBUG,
  QUEEN as HIVE_QUEEN,
  SPIDER as HIVE_SPIDER,
  WHITE as HIVE_WHITE,
} from "./pieces.ts";
export {
  cellAt as hexCell,
  cellQ as hexCellQ,
  cellR as hexCellR,
  DIR_DQ as HEX_DIR_DQ,
  DIR_DR as HEX_DIR_DR,
  GRID_SIZE as HIVE_GRID_SIZE,
  MAX_STACK as HIVE_MAX_STACK,
  neighbor as hexNeighbor,
  NUM_CELLS as HIVE_NUM_CELLS,
  ORIGIN as HIVE_ORIGIN,
} from "./grid.ts";
export { MoveGenerator as HiveMoveGenerator } from "./movegen.ts";
export type { HiveBoard } from "./board.ts";
export { perft as hivePerft, perftDivide as hivePerftDivide } from "./perft.ts";
export { parseMoveString as parseHiveMoveString } from "./notation.ts";
export type { ParsedMove as ParsedHiveMove } from "./notation.ts";
export {
  encodeHivePosition,
  HIVE_BOARD,
  HIVE_DIR_ABOVE,
  HIVE_DIRECTIONS,
  HIVE_PASS_INDEX,
  HIVE_PLANE_SIZE,
  HIVE_PLANES,
  HIVE_POLICY_SIZE,
  hiveCellPositions,
  hiveIndexMove,
  hiveLegalMask,
  hiveMoveIndex,
  PLANE as HIVE_PLANE,
} from "./encoding.ts";
export {
  HIVE_CELL_ENTRY,
  HIVE_CELLS,
  HIVE_CELLS_PASS_SLOT,
  hiveMoveCellRows,
  hiveMoveCells,
  packMoveCells as packHiveMoveCells,
} from "./move_cells.ts";

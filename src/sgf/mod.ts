// Public API of boardspace.net Hive record ingestion (SGF reader, dialect, replay, game store).
export { MAX_SGF_DEPTH, parseSgf, SgfSyntaxError, sgfValue } from "./reader.ts";
export type { SgfNode, SgfProperty, SgfTree } from "./reader.ts";
export {
  BOARDSPACE_VERBS,
  convertBoardspaceRecord,
  RecordError as BoardspaceRecordError,
} from "./record.ts";
export type { BoardspaceRecord, RecordEnding, RecordPly } from "./record.ts";
export { boardspaceDate, boardspaceGameType, outcomeFromText } from "./headers.ts";
export type { GameOutcome } from "./headers.ts";
export { decideResult, hiveGameOutcome, replayRecord } from "./replay.ts";
export type { ReplayedGame } from "./replay.ts";
export {
  BOARDSPACE_BOTS,
  ingestBoardspace,
  ingestRecordFile,
  normalizeVariant,
  storedGamePgn,
} from "./ingest.ts";
export type {
  FileIngest,
  IngestFilter,
  IngestOptions,
  IngestSummary,
  Rejection,
} from "./ingest.ts";
export { formatPgn as formatHivePgn, parsePgn as parseHivePgn } from "./pgn.ts";
export type { PgnGame as HivePgnGame } from "./pgn.ts";
export { gameId, readGameStore } from "./store.ts";
export type { StoredGame, Termination } from "./store.ts";
export { gamePositions, streamGamePositions, valueForPly } from "./positions.ts";
export type { GamePosition, PositionFilter } from "./positions.ts";
export {
  DEFAULT_MAX_ARCHIVE_BYTES,
  DEFAULT_MAX_MEMBER_BYTES,
  sgfMembersOfZip,
  sourceFiles,
} from "./sources.ts";
export type { SourceFailure, SourceFile, SourceLimits } from "./sources.ts";
export { lockStore } from "./lock.ts";
export type { LockOptions, StoreLock } from "./lock.ts";

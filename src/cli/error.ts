// Kept for imports that predate src/errors.ts: the error type lives there now.
export { type ErrorCode, isKibitzError, KibitzError } from "../errors.ts";

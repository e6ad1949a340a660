// The one error type of Kibitz, at the bottom of the import graph: every module (quant, gpu, nn,
// hive, sgf, poker, cli) may throw it without importing a CLI module.

/**
 * Every machine-readable error code Kibitz throws: a closed union, so a new code is a deliberate
 * edit here and a consumer can switch over all of them.
 */
export type ErrorCode =
  // bad input (arguments, configs, files): tasks exit 2
  | "bad_args"
  | "bad_algorithm"
  | "bad_batch"
  | "bad_bet_size"
  | "bad_block"
  | "bad_card"
  | "bad_checkpoint"
  | "checkpoint_truncated"
  | "checkpoint_version"
  | "checkpoint_checksum"
  | "bad_config"
  | "bad_format"
  | "bad_game"
  | "bad_game_string"
  | "bad_game_type"
  | "bad_length"
  | "bad_lock"
  | "bad_mapping"
  | "bad_move"
  | "bad_node"
  | "bad_option"
  | "bad_range"
  | "bad_save"
  | "bad_shape"
  | "bad_state"
  | "bad_store"
  | "bad_terminal"
  | "bad_zip"
  | "batch_too_large"
  | "empty_ranges"
  | "invalid_move"
  | "missing_input"
  | "non_finite"
  | "not_found"
  | "over_memory"
  | "shape_mismatch"
  | "too_large"
  | "too_deep"
  | "tree_too_large"
  | "warmstart_mismatch"
  // SGF reading and boardspace record conversion (ingest rejection reasons)
  | "sgf_syntax"
  | "sgf_truncated"
  | "not_hive"
  | "unknown_variant"
  | "empty_game"
  | "unknown_verb"
  | "illegal_move"
  | "bad_coordinate"
  | "bad_piece"
  | "no_equity"
  | "bad_buffer"
  | "bad_model"
  | "empty_buffer"
  | "no_data"
  | "gpu_too_large"
  | "gpu_unsupported"
  // the environment (files, devices, processes): tasks exit 1
  | "io_error"
  | "unwritable"
  | "store_locked"
  | "busy_port"
  | "no_gpu"
  | "no_gpu_backend"
  | "gpu_selftest"
  | "gpu_lost"
  | "shader_error"
  | "missing_kernel"
  | "worker_failed"
  | "no_browser"
  | "browser_unavailable"
  | "browser_exited"
  | "browser_timeout"
  | "browser_check_failed"
  | "bundle_failed"
  | "wgsl_specialize"
  | "write_failed"
  | "refsolve_failed";

/** Codes that mean "the environment failed", not "the input was bad": tasks exit 1 for these. */
export const ENVIRONMENT_ERRORS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "io_error",
  "unwritable",
  "store_locked",
  "busy_port",
  "no_gpu",
  "no_gpu_backend",
  "gpu_selftest",
  "gpu_lost",
  "shader_error",
  "missing_kernel",
  "worker_failed",
  "no_browser",
  "browser_unavailable",
  "browser_exited",
  "browser_timeout",
  "browser_check_failed",
  "bundle_failed",
  "wgsl_specialize",
  "write_failed",
  "refsolve_failed",
]);

/** The one error type of Kibitz: a stable machine-readable code plus a human message. */
export class KibitzError extends Error {
  /** A short stable identifier such as `bad_config` or `no_gpu`. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "KibitzError";
    this.code = code;
  }
}

/** True when `e` is a KibitzError, optionally with the given code. */
export function isKibitzError(e: unknown, code?: ErrorCode): e is KibitzError {
  return e instanceof KibitzError && (code === undefined || e.code === code);
}

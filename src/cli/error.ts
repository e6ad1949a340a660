/** The one error type of Kibitz: a stable machine-readable code plus a human message. */
export class KibitzError extends Error {
  /** A short stable identifier such as `bad_config` or `no_gpu`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "KibitzError";
    this.code = code;
  }
}

/** True when `e` is a KibitzError, optionally with the given code. */
export function isKibitzError(e: unknown, code?: string): e is KibitzError {
  return e instanceof KibitzError && (code === undefined || e.code === code);
}

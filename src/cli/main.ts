import { ENVIRONMENT_ERRORS, isKibitzError } from "../errors.ts";
import { osReason } from "./paths.ts";

/** Exit status for bad input (arguments, configs, record files). */
export const EXIT_BAD_INPUT = 2;
/** Exit status for failures of the environment (files, devices, ports, our own defects). */
export const EXIT_FAILURE = 1;

/** The OS path an OS error names, if Deno put one in its message (`open '/x'`, `mkdir '/x'`). */
function osPath(e: Error): string | null {
  const m = /\): \w+ '([^']*)'(?: -> '[^']*')?$/.exec(e.message);
  return m ? m[1] : null;
}

/**
 * The one-line message and exit status of a failure: `KibitzError` is bad input (2) unless its
 * code is an environment failure; OS errors name the path and exit 1; anything else exits 1.
 */
export function describeFailure(e: unknown): { message: string; status: number } {
  if (isKibitzError(e)) {
    return {
      message: e.message,
      status: ENVIRONMENT_ERRORS.has(e.code) ? EXIT_FAILURE : EXIT_BAD_INPUT,
    };
  }
  if (e instanceof Error && Object.values(Deno.errors).some((c) => e instanceof c)) {
    const path = osPath(e);
    return { message: `${path ?? e.name}: ${osReason(e)}`, status: EXIT_FAILURE };
  }
  if (e instanceof Error) return { message: `${e.name}: ${e.message}`, status: EXIT_FAILURE };
  return { message: String(e), status: EXIT_FAILURE };
}

/**
 * Runs a task's main function, printing `error: <what>: <why>` and exiting 2 for bad input or 1
 * for failures of the environment; the stack trace only with `KIBITZ_DEBUG=1`.
 */
export async function runMain(main: () => Promise<void> | void): Promise<void> {
  try {
    await main();
  } catch (e) {
    const { message, status } = describeFailure(e);
    console.error(`error: ${message}`);
    if (Deno.env.get("KIBITZ_DEBUG") === "1" && e instanceof Error && e.stack) {
      console.error(e.stack);
    }
    Deno.exit(status);
  }
}

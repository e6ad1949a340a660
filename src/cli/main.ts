import { isKibitzError } from "../errors.ts";

/** Runs a task's main function, printing `error: ...` and exiting non-zero on failure. */
export async function runMain(main: () => Promise<void> | void): Promise<void> {
  try {
    await main();
  } catch (e) {
    if (isKibitzError(e)) {
      console.error(`error: ${e.message}`);
      Deno.exit(2);
    }
    console.error(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    Deno.exit(1);
  }
}

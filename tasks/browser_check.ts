import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ensureInput } from "../src/cli/paths.ts";
import { findChromium, runBrowserCheck } from "../src/build/browser_check.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task browser-check [--chromium PATH]",
    "Builds the browser bundle and runs it in headless Chromium (cross-origin isolated page, WebGPU\n" +
      "enabled): Kuhn value, Hive perft, game id, TOML, two-thread solves on the page and in a\n" +
      "worker against the one-thread solve, GPU self-test. Debian: apt-get install chromium.",
    { chromium: { type: "string", help: "browser executable (default: chromium on PATH)" } },
  );
  if (!args) return;
  if (args.positionals.length) {
    throw new KibitzError(
      "bad_args",
      `argument "${args.positionals[0]}": unexpected (this task takes options only)`,
    );
  }
  if (args.values.chromium) await ensureInput(String(args.values.chromium), "--chromium");
  const chromium = args.values.chromium ? String(args.values.chromium) : await findChromium();
  if (!chromium) {
    throw new KibitzError(
      "no_browser",
      "chromium: not found on PATH; install it or pass --chromium PATH",
    );
  }
  const r = await runBrowserCheck(
    chromium,
    Number(Deno.env.get("KIBITZ_BROWSER_TIMEOUT_MS") ?? 180_000),
  );
  console.log(JSON.stringify(r, null, 2));
  if (r.error) throw new KibitzError("browser_check_failed", r.error);
});

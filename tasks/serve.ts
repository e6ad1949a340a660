import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { osReason } from "../src/cli/paths.ts";
import { buildDemo, serveIsolated } from "../src/build/serve.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task serve [--port N] [--host HOST]",
    "Builds the browser bundle and serves the postflop solver page (examples/browser) with the\n" +
      "cross-origin isolation headers worker threads need. Open the printed URL; Ctrl-C stops.",
    {
      port: { type: "string", help: "port to listen on (default 8000)" },
      host: { type: "string", default: "127.0.0.1", help: "address to listen on" },
    },
  );
  if (!args) return;
  if (args.positionals.length) {
    throw new KibitzError(
      "bad_args",
      `argument "${args.positionals[0]}": unexpected (this task takes options only)`,
    );
  }
  const port = intOption(args.values, "port", 8000, 0, 65535);
  const hostname = String(args.values.host);
  const dir = await Deno.makeTempDir({ prefix: "kibitz_serve_" });
  // Listen first, so a busy port fails in a second and not after the bundle build.
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = serveIsolated(dir, { port, hostname });
  } catch (e) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    if (e instanceof Deno.errors.AddrInUse) {
      throw new KibitzError(
        "busy_port",
        `--port ${port} on ${hostname}: ${osReason(e)} (another server is there; pick another ` +
          `--port, or 0 for any free one)`,
      );
    }
    if (e instanceof Deno.errors.AddrNotAvailable) {
      throw new KibitzError("bad_args", `--host ${hostname}: not an address of this machine`);
    }
    throw e;
  }
  let files: string[];
  try {
    files = await buildDemo(dir);
  } catch (e) {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
  console.log(`serving ${files.join(", ")} from ${dir}`);
  console.log(`open http://${server.addr.hostname}:${server.addr.port}/`);
  const stop = () => server.shutdown();
  Deno.addSignalListener("SIGINT", stop);
  await server.finished;
  Deno.removeSignalListener("SIGINT", stop);
  await Deno.remove(dir, { recursive: true });
});

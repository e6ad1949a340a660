import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
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
    throw new KibitzError("bad_args", `unexpected argument "${args.positionals[0]}"`);
  }
  const port = intOption(args.values, "port", 8000, 0, 65535);
  const dir = await Deno.makeTempDir({ prefix: "kibitz_serve_" });
  const files = await buildDemo(dir);
  const server = serveIsolated(dir, { port, hostname: String(args.values.host) });
  console.log(`serving ${files.join(", ")} from ${dir}`);
  console.log(`open http://${server.addr.hostname}:${server.addr.port}/`);
  const stop = () => server.shutdown();
  Deno.addSignalListener("SIGINT", stop);
  await server.finished;
  Deno.removeSignalListener("SIGINT", stop);
  await Deno.remove(dir, { recursive: true });
});

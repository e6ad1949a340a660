// A static file server for the browser bundle and its pages, cross-origin isolated (the headers
// SharedArrayBuffer, hence worker threads, needs), with one POST endpoint for page reports.
import { BUNDLE_FILES, bundleBrowser } from "./bundle.ts";

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  toml: "text/plain; charset=utf-8",
};

const ISOLATION = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
  // Browsers must trust the content-type below, never guess one from the bytes.
  "x-content-type-options": "nosniff",
};

/** Options of serveIsolated. */
export interface ServeOptions {
  /** Port (0: any free one). */
  port: number;
  /** Host to listen on (default 127.0.0.1). */
  hostname?: string;
  /** Called with the path and body of every POST (the pages' reports); without it POST is 405. */
  onPost?: (path: string, body: string) => void;
  /** Called with the path of every GET. */
  onGet?: (path: string) => void;
}

/**
 * Serves the files of `dir` (one level, plain names) cross-origin isolated; returns the server.
 * Read-only: GET and HEAD (and POST only when `onPost` takes the pages' reports), 405 otherwise.
 */
export function serveIsolated(dir: string, options: ServeOptions): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: options.hostname ?? "127.0.0.1", port: options.port, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === "POST" && options.onPost) {
        options.onPost(path, await req.text());
        return new Response("ok", { headers: ISOLATION });
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        const allow = options.onPost ? "GET, HEAD, POST" : "GET, HEAD";
        return new Response("method not allowed", {
          status: 405,
          headers: { ...ISOLATION, allow },
        });
      }
      options.onGet?.(path);
      const file = path === "/" ? "index.html" : path.slice(1);
      if (!/^[\w.-]+$/.test(file)) {
        return new Response("not found", { status: 404, headers: ISOLATION });
      }
      try {
        const body = await Deno.readFile(`${dir}/${file}`);
        const type = TYPES[file.slice(file.lastIndexOf(".") + 1)] ?? "application/octet-stream";
        return new Response(body, { headers: { ...ISOLATION, "content-type": type } });
      } catch {
        return new Response("not found", { status: 404, headers: ISOLATION });
      }
    },
  );
}

/** Builds the bundle into `dir` and copies the solver page (examples/browser) beside it. */
export async function buildDemo(dir: string): Promise<string[]> {
  await bundleBrowser({ outDir: dir });
  const pages = new URL("../../examples/browser/", import.meta.url);
  const copied: string[] = [BUNDLE_FILES.main, BUNDLE_FILES.worker];
  for await (const e of Deno.readDir(pages)) {
    if (!e.isFile) continue;
    await Deno.copyFile(new URL(e.name, pages), `${dir}/${e.name}`);
    copied.push(e.name);
  }
  return copied;
}

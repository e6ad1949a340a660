// The page server is read-only: GET and HEAD (POST only where a report hook is given), 405 with
// Allow otherwise, and nosniff on every answer.
import { deepEqual, equal } from "node:assert/strict";
import { serveIsolated } from "../../src/build/serve.ts";

Deno.test("serve: GET/HEAD only, 405 with Allow otherwise, nosniff everywhere", async () => {
  const dir = await Deno.makeTempDir();
  Deno.writeTextFileSync(`${dir}/index.html`, "<p>hi</p>");
  const posts: string[] = [];
  const plain = serveIsolated(dir, { port: 0 });
  const hooked = serveIsolated(dir, { port: 0, onPost: (path, body) => posts.push(path + body) });
  try {
    const url = (s: Deno.HttpServer<Deno.NetAddr>, p = "/") =>
      `http://${s.addr.hostname}:${s.addr.port}${p}`;
    const ask = async (s: Deno.HttpServer<Deno.NetAddr>, method: string, p = "/") => {
      const r = await fetch(url(s, p), {
        method,
        body: method === "POST" || method === "PUT" ? "x" : undefined,
      });
      const body = await r.text();
      return {
        status: r.status,
        body,
        nosniff: r.headers.get("x-content-type-options"),
        allow: r.headers.get("allow"),
      };
    };
    const get = await ask(plain, "GET");
    deepEqual([get.status, get.body, get.nosniff], [200, "<p>hi</p>", "nosniff"]);
    const head = await ask(plain, "HEAD");
    deepEqual([head.status, head.body, head.nosniff], [200, "", "nosniff"]);
    for (const method of ["PUT", "DELETE", "PATCH", "POST"]) {
      const r = await ask(plain, method);
      deepEqual([method, r.status, r.allow, r.nosniff], [method, 405, "GET, HEAD", "nosniff"]);
    }
    equal((await ask(plain, "GET", "/missing.js")).nosniff, "nosniff");
    equal((await ask(hooked, "POST", "/report")).status, 200);
    deepEqual(posts, ["/reportx"]);
    const put = await ask(hooked, "PUT");
    deepEqual([put.status, put.allow], [405, "GET, HEAD, POST"]);
    equal(Deno.readTextFileSync(`${dir}/index.html`), "<p>hi</p>");
  } finally {
    await plain.shutdown();
    await hooked.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

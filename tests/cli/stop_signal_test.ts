import assert from "node:assert/strict";

// listenForStop: SIGTERM (a scheduler's stop) asks a long job to stop like Ctrl-C does, even while
// an atomic write is in flight, and a second signal quits at once (exit 130), removing the temp
// files in flight.

async function stopTwice(second: string, tmp?: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tests/fixtures/cli/stop_twice.ts", second, ...(tmp ? [tmp] : [])],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test({
  name: "a stop signal asks the job to stop; a second quits at once and removes temp files",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    assert.deepEqual(await stopTwice("SIGTERM"), { code: 130, stdout: "stop requested\n" });
    const dir = await Deno.makeTempDir();
    try {
      const tmp = `${dir}/result.json.tmp`;
      // One signal with a write in flight: the job goes on to finish it (the temp file stays).
      assert.deepEqual(await stopTwice("none", tmp), {
        code: 0,
        stdout: "stop requested\nstill running\n",
      });
      assert.ok((await Deno.stat(tmp)).isFile);
      assert.deepEqual(await stopTwice("SIGINT", tmp), { code: 130, stdout: "stop requested\n" });
      await assert.rejects(Deno.stat(tmp));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

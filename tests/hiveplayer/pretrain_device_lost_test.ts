// GPU pretraining whose device is lost in epoch 2 resumes from epoch 1's checkpoint on a new device
// and ends as an uninterrupted run. The loss is the shared device's, so it runs in a process of
// its own (tests/fixtures/gpu/pretrain_device_lost.ts).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";

const ctx = await getGpu();

Deno.test({
  name: "pretrain: a lost device in epoch 2 resumes from epoch 1 and ends as an uninterrupted run",
  ignore: !ctx,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const script = new URL("../fixtures/gpu/pretrain_device_lost.ts", import.meta.url).pathname;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", script, dir],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const got = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
      if (got.skipped) return;
      assert.equal(got.lost, true);
      assert.deepEqual(got.epochs, [1, 2, 3]);
      assert.equal(got.notes.length, 2, got.notes.join("\n"));
      assert.match(
        got.notes[0],
        /device was lost \(destroyed.*resuming from the last epoch's checkpoint/,
      );
      assert.match(got.notes[1], /^resuming .*parts\.kbnn after epoch 1 of 3/);
      assert.equal(got.sameWeights, true);
      assert.equal(got.sameReports, true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

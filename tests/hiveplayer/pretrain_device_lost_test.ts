// GPU pretraining whose device is lost in epoch 2 resumes from epoch 1's checkpoint on a new device
// and ends as an uninterrupted run. The loss is the shared device's, so it runs in a process of
// its own (tests/fixtures/gpu/pretrain_device_lost.ts).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { runFixture } from "../helpers/child_fixture.ts";

const ctx = await getGpu();

Deno.test({
  name: "pretrain: a lost device in epoch 2 resumes from epoch 1 and ends as an uninterrupted run",
  ignore: !ctx,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const got = await runFixture<{
        lost: boolean;
        notes: string[];
        sameWeights: boolean;
        sameReports: boolean;
        epochs: number[];
      }>("gpu/pretrain_device_lost.ts", dir);
      if ("skipped" in got) return;
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

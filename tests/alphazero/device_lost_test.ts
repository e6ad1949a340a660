// A self-play loop on the GPU whose device is lost during training resumes from the candidate's
// checkpoint on a new device and ends where an uninterrupted run ends. The loss is the shared
// device's, so it runs in a process of its own (tests/fixtures/gpu/az_device_lost.ts).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { runFixture } from "../helpers/child_fixture.ts";

const ctx = await getGpu();

Deno.test({
  name: "loop: training survives a lost device and ends as an uninterrupted run",
  ignore: !ctx,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const got = await runFixture<{ lost: boolean; resumed: string[]; same: boolean }>(
        "gpu/az_device_lost.ts",
        dir,
      );
      if ("skipped" in got) return;
      assert.equal(got.lost, true, "the device was destroyed in training");
      assert.equal(got.resumed.length, 1);
      assert.match(
        got.resumed[0],
        /^iteration 1 train: .*device was lost \(destroyed.*\); resuming/,
      );
      assert.doesNotMatch(got.resumed[0], /run again/);
      assert.equal(got.same, true, "the same candidate weights and log as the uninterrupted run");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

import assert from "node:assert/strict";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { netPreset } from "../../src/nn/config.ts";
import { interruptTask, runTask } from "../helpers/task_process.ts";

// `deno task nn-train` stopped by SIGTERM (or Ctrl-C) saves its checkpoint at the step it reached,
// and a second run continues from there.

Deno.test("nn-train: SIGTERM saves the checkpoint at the step reached; a rerun continues", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ckpt = `${dir}/nn.kbnn`;
    const args = ["--steps", "100000", "--checkpoint", ckpt, "--every", "0", "--backend", "cpu"];
    const r = await interruptTask("tasks/nn_train.ts", args, /step [1-9]\d*\/100000/, "SIGTERM");
    assert.equal(r.code, 0, r.stderr);
    const at = Number(/stopped at step (\d+); run again to continue/.exec(r.stderr)?.[1]);
    assert.ok(at >= 1 && at < 100_000, r.stderr);
    const saved = await loadCheckpoint(ckpt, netPreset("tiny"));
    assert.equal(Number(saved.meta.step), at);
    const more = await runTask("tasks/nn_train.ts", [
      ...args.slice(0, 1),
      String(at + 2),
      ...args.slice(2),
    ]);
    assert.equal(more.code, 0, more.stderr);
    assert.match(more.stdout, new RegExp(`resumed at step ${at};`));
    assert.equal(Number((await loadCheckpoint(ckpt, netPreset("tiny"))).meta.step), at + 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

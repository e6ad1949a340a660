// nn-train resumed from a checkpoint already past --steps trains nothing and says so (it used to
// print "-1 steps").
import { equal, match, ok } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function train(args: string[]) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}tasks/nn_train.ts`, "--backend", "cpu", "--batch", "2", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, all: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("task nn-train: a checkpoint past --steps trains nothing, never negative steps", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ckpt = `${dir}/c/net.ckpt`;
    const first = await train(["--steps", "3", "--checkpoint", ckpt]);
    equal(first.code, 0, first.all);
    match(first.all, /3 steps in/);
    const again = await train(["--steps", "2", "--checkpoint", ckpt]);
    equal(again.code, 0, again.all);
    ok(!/-\d+ steps/.test(again.all), again.all);
    match(again.all, /nothing to train: the checkpoint is at step 3, --steps is 2/);
    match(again.all, /resumed at step 3/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

import assert from "node:assert/strict";
import { type DeviceNodes, hardwareGpuAbsent } from "../../src/gpu/hardware_nodes.ts";

// `auto` skips the WebGPU probe (and the 64 MB of driver it loads) only where no hardware GPU can
// exist: Linux with no GPU device node it may read. Anything else may have one.

function nodes(os: string, tree: Record<string, string[] | null | undefined>): DeviceNodes {
  return { os, list: (dir) => tree[dir] ?? null };
}

Deno.test("hardwareGpuAbsent: only Linux without a GPU device node has no hardware GPU", () => {
  const plain = ["null", "zero", "tty", "random", "shm"];
  assert.match(
    hardwareGpuAbsent(nodes("linux", { "/dev": plain }))!,
    /no GPU device node: \/dev\/dri\/renderD\*, \/dev\/nvidia\*, \/dev\/dxg/,
  );
  assert.ok(hardwareGpuAbsent(nodes("linux", { "/dev": [...plain, "dri"], "/dev/dri": [] })));
  for (
    const tree of [
      { "/dev": [...plain, "nvidia0", "nvidiactl"] },
      { "/dev": [...plain, "dri"], "/dev/dri": ["by-path", "renderD128"] },
      { "/dev": [...plain, "dri"], "/dev/dri": ["card0"] },
      { "/dev": [...plain, "dxg"] }, // WSL 2
      { "/dev": [...plain, "mali0"] },
      { "/dev": [...plain, "kgsl-3d0"] },
      { "/dev": null }, // unreadable: may have one
    ]
  ) {
    assert.equal(hardwareGpuAbsent(nodes("linux", tree)), null, JSON.stringify(tree));
  }
  for (const os of ["darwin", "windows", "browser"]) {
    assert.equal(hardwareGpuAbsent(nodes(os, { "/dev": plain })), null, os);
  }
});

Deno.test("hardwareGpuAbsent on this machine agrees with its /dev", () => {
  const dev = [...Deno.readDirSync("/dev")].map((e) => e.name);
  const gpu =
    dev.some((n) => ["nvidia", "dxg", "mali", "kgsl", "pvr"].some((p) => n.startsWith(p))) ||
    (dev.includes("dri") && [...Deno.readDirSync("/dev/dri")].length > 0);
  assert.equal(hardwareGpuAbsent() === null, Deno.build.os !== "linux" || gpu);
});

Deno.test("KIBITZ_GPU_PROBE=1 looks for an adapter whatever /dev shows", async () => {
  const absent = async (env: Record<string, string>) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "tests/fixtures/gpu/probe_env.ts"],
      env,
      stdout: "piped",
    }).output();
    return JSON.parse(new TextDecoder().decode(out.stdout)).absent;
  };
  assert.match(await absent({ KIBITZ_GPU_PROBE: "0" }), /no GPU device node/);
  assert.equal(await absent({ KIBITZ_GPU_PROBE: "1" }), null);
});

// Where a recorded plan's GPU time goes (`bench nn`, GPU only): every dispatch of the plan in its
// own timestamped compute pass, in sequence in one submit, summed by phase (the recorder's marks:
// forward, backward, optimizer...) and by kernel; and the plan replayed back to back with warm
// clocks, the GPU cost per call that pipelined calls pay.
import type { GpuContext } from "../gpu/device.ts";
import { timeComputePass, timeComputePasses } from "../gpu/timing.ts";
import type { GpuRecorder } from "./gpu/backend.ts";
import { median } from "./bench_latency.ts";

/** GPU ms of one (phase, kernel) group of a plan's dispatches. */
export interface ProfileRow {
  phase: string;
  kernel: string;
  dispatches: number;
  ms: number;
}

/** A plan's GPU time by phase and kernel, and its time as one pass, cold and back to back. */
export interface PlanProfile {
  rows: ProfileRow[];
  phases: { phase: string; dispatches: number; ms: number }[];
  /** Sum of the per-dispatch times (each dispatch its own pass). */
  sumMs: number;
  /** The whole plan as one pass, warm clocks (median). */
  planMs: number;
  /** The plan encoded `reps` times back to back in one pass, per replay (best of the passes). */
  backToBackMs: number;
  reps: number;
  timer: string;
}

/** The phase of each op index from the recorder's marks ("setup" before the first mark). */
export function opPhases(ops: number, marks: readonly { phase: string; at: number }[]): string[] {
  const out: string[] = [];
  let m = 0, phase = "setup";
  for (let i = 0; i < ops; i++) {
    while (m < marks.length && marks[m].at <= i) phase = marks[m++].phase;
    out.push(phase);
  }
  return out;
}

/**
 * Groups per-dispatch times by (phase, kernel label), phases in plan order and kernels by time;
 * null times count as 0.
 */
export function groupProfile(
  labels: readonly string[],
  phases: readonly string[],
  ms: readonly (number | null)[],
): { rows: ProfileRow[]; phases: { phase: string; dispatches: number; ms: number }[] } {
  const byKey = new Map<string, ProfileRow>();
  const byPhase = new Map<string, { phase: string; dispatches: number; ms: number }>();
  labels.forEach((kernel, i) => {
    const phase = phases[i];
    const key = `${phase}\u0000${kernel}`;
    const r = byKey.get(key) ?? { phase, kernel, dispatches: 0, ms: 0 };
    r.dispatches++;
    r.ms += ms[i] ?? 0;
    byKey.set(key, r);
    const p = byPhase.get(phase) ?? { phase, dispatches: 0, ms: 0 };
    p.dispatches++;
    p.ms += ms[i] ?? 0;
    byPhase.set(phase, p);
  });
  const order = [...byPhase.keys()];
  const rows = [...byKey.values()].sort((a, b) =>
    order.indexOf(a.phase) - order.indexOf(b.phase) || b.ms - a.ms
  );
  return { rows, phases: [...byPhase.values()] };
}

/**
 * Profiles a recorded plan: warms the clocks for `warmMs` by replaying it, times it as one pass
 * (median of 3), `reps` replays back to back in one pass (best of 3 after a warm-up, else one),
 * and every dispatch in its own pass (median of `samples` submits per dispatch).
 */
export async function profilePlan(
  ctx: GpuContext,
  rec: GpuRecorder,
  opts: { warmMs?: number; reps?: number; samples?: number } = {},
): Promise<PlanProfile> {
  const { warmMs = 300, reps = 8, samples = 3 } = opts;
  // Warm-up passes of `reps` replays each: one replay a pass would leave the GPU idle through
  // each readback, and its clocks down.
  const until = performance.now() + warmMs;
  while (performance.now() < until) {
    await timeComputePass(ctx, (pass) => {
      for (let i = 0; i < reps; i++) rec.encode(pass);
    });
  }
  const whole: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = await timeComputePass(ctx, (pass) => rec.encode(pass));
    whole.push(t.gpuMs ?? t.wallMs);
  }
  const b2b: number[] = [];
  for (let i = 0; i < (warmMs > 0 ? 3 : 1); i++) {
    const t = await timeComputePass(ctx, (pass) => {
      for (let j = 0; j < reps; j++) rec.encode(pass);
    });
    b2b.push((t.gpuMs ?? t.wallMs) / reps);
  }
  const per: (number | null)[][] = rec.ops.map(() => []);
  for (let s = 0; s < samples; s++) {
    const t = await timeComputePasses(
      ctx,
      rec.ops.map((op) => (pass: GPUComputePassEncoder) => {
        pass.setPipeline(op.pipeline);
        pass.setBindGroup(0, op.bindGroup);
        pass.dispatchWorkgroups(...op.groups);
      }),
    );
    t.passMs.forEach((ms, i) => per[i].push(ms));
  }
  const ms = per.map((xs) => {
    const ok = xs.filter((x): x is number => x !== null);
    return ok.length ? median(ok) : null;
  });
  const g = groupProfile(
    rec.ops.map((o) => o.label),
    opPhases(rec.ops.length, rec.marks),
    ms,
  );
  return {
    ...g,
    sumMs: ms.reduce((a: number, x) => a + (x ?? 0), 0),
    planMs: median(whole),
    backToBackMs: Math.min(...b2b),
    reps,
    timer: ctx.timestamps
      ? `gpu timestamps; per dispatch: its own pass, median of ${samples}`
      : "wall (no timestamp queries: per-dispatch times unavailable)",
  };
}

/** What sustainedReplays measured: each replay's GPU ms, and the first and last quarters'. */
export interface SustainedReplays {
  passMs: number[];
  /** Replays in a quarter (at least 1). */
  quarter: number;
  /** Median GPU ms of the first and of the last quarter of the replays. */
  firstMs: number;
  lastMs: number;
}

/**
 * The plan replayed `count` times back to back, each replay its own timestamped pass, all in one
 * submit: the GPU never idles between them, as under pipelined calls. Pipelined calls ran about
 * 2.5 % slower than profilePlan's back-to-back time (sessions 31 and 41), which warms the clocks
 * for 300 ms and times passes with a readback between them. If the last replays here run that
 * much slower than the first, the clocks under sustained load explain the gap, not the calls'
 * submits or drains. Null without timestamp queries.
 */
export async function sustainedReplays(
  ctx: GpuContext,
  rec: GpuRecorder,
  count: number,
): Promise<SustainedReplays | null> {
  if (!ctx.timestamps || count < 1) return null;
  const t = await timeComputePasses(
    ctx,
    Array.from({ length: count }, () => (pass: GPUComputePassEncoder) => rec.encode(pass)),
  );
  const passMs = t.passMs.filter((x): x is number => x !== null);
  if (passMs.length !== count) return null;
  const q = Math.max(1, Math.floor(count / 4));
  return {
    passMs,
    quarter: q,
    firstMs: median(passMs.slice(0, q)),
    lastMs: median(passMs.slice(count - q)),
  };
}

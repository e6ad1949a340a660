// The readback of pipelined inference calls: persistent staging buffers (no buffer created or
// destroyed per call) and map requests that do not stall the JavaScript thread on the GPU.
//
// Deno 2.9's GPUBuffer.mapAsync polls the device with a *wait* (wgpu's
// `PollType::wait_indefinitely`) as soon as it is called, then sleeps 10 ms before it resolves: the
// call blocks the JavaScript thread until every submitted command buffer has finished, and the
// promise comes 10 ms later whatever the work (the "readback floor"). A call that requests its map
// right after its submit therefore waits for its own GPU work before the next call can even be
// encoded, so calls in flight serialize as encode + GPU + encode + GPU... The "deferred" mode
// instead requests a call's map only when the next call is ready to submit (its inputs uploaded
// and its plan encoded while the GPU ran this one) or, when no call comes, after about the GPU time
// calls take: the wait then finds the GPU done or nearly so. A call made while no other is in
// flight requests its map at once (nothing to overlap; a timer would only add latency).
//
// Each such wait empties the GPU's queue before the next call is submitted, so every call pays the
// gap between one command buffer finishing and the next starting (batch 1 on the H200, session 29:
// 1.60 ms a call with 16 in flight against 1.33 GPU ms). The "grouped" mode (session 30; the
// default on hardware since it measured faster, see defaultMapMode) requests maps every second call
// while at least GROUP_DEPTH calls are in flight, so half the calls find the one before them still
// queued behind the GPU's work. Its group size (mapGroup, session 32) can be larger where many
// calls are in flight: at batch 256 each drain cost about 2.1 ms a call on the H200 (session 31).
import { KibitzError } from "../../errors.ts";
import { envValue } from "../../env.ts";
import type { GpuContext } from "../../gpu/device.ts";
import type { GpuTensor } from "./tensor.ts";

/**
 * When a call requests its map: right after its submit, deferred to the next call's submit, or
 * grouped (every second call's submit where many are in flight; see the module comment).
 */
export type MapMode = "eager" | "deferred" | "grouped";

/** The map modes, in the order the bench compares them. */
export const MAP_MODES: readonly MapMode[] = ["eager", "deferred", "grouped"];

/**
 * Calls in flight from which the grouped mode requests maps every second call: fewer would leave
 * a caller waiting on a result whose map was not requested (2 in flight: each waits for the other).
 * Groups of G calls need G + 2 in flight.
 */
export const GROUP_DEPTH = 4;

/** The grouped mode's default group: maps requested every second call. */
export const MAP_GROUP = 2;

/**
 * The grouped mode's group size: KIBITZ_NN_MAP_GROUP (an integer from 2 to 64) where set, else
 * MAP_GROUP.
 */
export function defaultMapGroup(v = envValue("KIBITZ_NN_MAP_GROUP")): number {
  return v === undefined || v === "" ? MAP_GROUP : parseMapGroup(v);
}

/** Checks a group size: an integer from 2 to 64. */
export function parseMapGroup(v: string | number): number {
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isInteger(n) || n < 2 || n > 64) {
    throw new KibitzError(
      "bad_args",
      `the grouped map requests' group (KIBITZ_NN_MAP_GROUP, GpuNet.mapGroup) must be an integer from 2 to 64, got "${v}"`,
    );
  }
  return n;
}

/** Host ms of inference calls by phase, summed over `calls` (the bench's host-side profile). */
export interface HostPhases {
  calls: number;
  /** Writing the inputs (queue.writeBuffer). */
  upload: number;
  /** The command encoder, the plan's pass, the readback copies and finish. */
  encode: number;
  /** Deferred and grouped modes: earlier calls' map requests made before this submit (a GPU wait). */
  drain: number;
  /** queue.submit. */
  submit: number;
  /** Eager mode: this call's map request (a GPU wait); deferred: the timer's requests. */
  request: number;
  /** After the map: getMappedRange copies and unmap. */
  readout: number;
  /** Deferred mode: maps requested by the next call's submit, and by the timer. */
  byNext: number;
  byTimer: number;
}

/** An all-zero phase record. */
export function hostPhases(): HostPhases {
  return {
    calls: 0,
    upload: 0,
    encode: 0,
    drain: 0,
    submit: 0,
    request: 0,
    readout: 0,
    byNext: 0,
    byTimer: 0,
  };
}

interface Pending {
  buffer: GPUBuffer;
  submittedAt: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

const MAP_READ = 0x1, COPY_DST = 0x8;
/** Longest the deferred timer waits for a call's GPU work before requesting its map. */
const MAX_WAIT_MS = 30;
/**
 * A map request that took longer than this waited for the GPU (one on an idle queue costs about
 * 0.06 ms on llvmpipe); shorter ones found the work done, so they say nothing of its length.
 */
const BLOCKED_MS = 0.25;

/**
 * Readbacks of inference calls: each call's outputs are copied (in its own command buffer) into a
 * pooled staging buffer and mapped once. Results come back in full, bit for bit as readTensors'.
 */
export class ReadbackQueue {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly all: GPUBuffer[] = [];
  private readonly unrequested: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Calls submitted whose values have not come back yet. */
  private outstanding = 0;
  /** Estimated GPU ms of a call from its submit (learned from the waits of map requests). */
  gpuEstimateMs = 0;
  /** Host phases of the calls while set (GpuNet.profileHost); null: not timed. */
  profile: HostPhases | null = null;
  /** Grouped mode: calls a map request covers (see parseMapGroup). */
  mapGroup = defaultMapGroup();

  /**
   * `maxWaitMs` caps the deferred timer (inference calls: MAX_WAIT_MS); `lateFactor` scales the
   * learned GPU time it waits (below 1 for inference calls, whose next call comes within
   * milliseconds; above 1 for training steps, whose next step is submitted after the host prepared
   * its batch: a timer that fired first would block the host on the GPU before it could).
   */
  constructor(
    readonly ctx: GpuContext,
    public mode: MapMode = "deferred",
    private readonly maxWaitMs = MAX_WAIT_MS,
    private readonly lateFactor = 1,
  ) {}

  /** Staging buffers held (free and in use). */
  get buffers(): number {
    return this.all.length;
  }

  private take(bytes: number): GPUBuffer {
    const b = this.free.get(bytes)?.pop();
    if (b) return b;
    const created = this.ctx.device.createBuffer({
      size: bytes,
      usage: MAP_READ | COPY_DST,
      label: "nn.readback",
    });
    this.all.push(created);
    return created;
  }

  private give(b: GPUBuffer): void {
    let list = this.free.get(b.size);
    if (!list) this.free.set(b.size, list = []);
    list.push(b);
  }

  /**
   * Appends copies of `ts` into one staging buffer to `enc`, submits it (first requesting the maps
   * of earlier deferred calls) and resolves with the tensors' values. `t0`: when the caller's
   * encoding began (for the profile's encode phase); `now`: no call follows until this one is read,
   * so its map is requested at once, as a call alone's is.
   */
  submit(
    enc: GPUCommandEncoder,
    ts: readonly GpuTensor[],
    t0 = 0,
    now = false,
  ): Promise<Float32Array[]> {
    const offsets: number[] = [];
    let total = 0;
    for (const t of ts) {
      offsets.push(total);
      total += Math.ceil(t.size * 4 / 256) * 256;
    }
    const staging = this.take(Math.max(256, total));
    ts.forEach((t, i) => {
      if (t.size > 0) enc.copyBufferToBuffer(t.buffer, 0, staging, offsets[i], t.size * 4);
    });
    const cb = enc.finish();
    const prof = this.profile;
    let t = prof ? performance.now() : 0;
    if (prof) prof.encode += t - t0;
    if (this.drainsNow()) {
      if (prof) prof.byNext += this.unrequested.length;
      this.requestPending();
      if (prof) prof.drain += -t + (t = performance.now());
    }
    this.ctx.device.queue.submit([cb]);
    const submittedAt = performance.now();
    if (prof) prof.submit += submittedAt - t;
    const mapped = new Promise<void>((resolve, reject) => {
      this.unrequested.push({ buffer: staging, submittedAt, resolve, reject });
    });
    // A call alone (no other in flight) has no next call to overlap: it requests its map now, as
    // the eager mode does, rather than after a timer (about 1-2 ms late in Deno).
    if (this.mode === "eager" || this.outstanding === 0 || now) {
      this.requestPending();
      if (prof) prof.request += performance.now() - submittedAt;
    } else {
      this.schedule();
    }
    this.outstanding++;
    if (prof) prof.calls++;
    return mapped.then(() => {
      this.outstanding--;
      const r0 = this.profile ? performance.now() : 0;
      try {
        const range = staging.getMappedRange(0, total);
        return ts.map((t, i) => new Float32Array(range.slice(offsets[i], offsets[i] + t.size * 4)));
      } finally {
        staging.unmap();
        this.give(staging);
        if (this.profile) this.profile.readout += performance.now() - r0;
      }
    }, (e) => {
      this.outstanding--;
      this.give(staging);
      throw e;
    });
  }

  /**
   * Whether a submit first requests the earlier calls' maps: deferred, always; grouped, once
   * mapGroup calls are unrequested, or while fewer than max(GROUP_DEPTH, mapGroup + 2) calls are in
   * flight (a caller awaiting its oldest call finds it requested).
   */
  private drainsNow(): boolean {
    if (this.mode === "eager") return false;
    if (this.mode === "deferred") return true;
    return this.unrequested.length >= this.mapGroup ||
      this.outstanding < Math.max(GROUP_DEPTH, this.mapGroup + 2);
  }

  /** Requests the maps of every submitted call not yet requested (each map waits for the GPU). */
  requestPending(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.unrequested.length === 0) return;
    const list = this.unrequested.splice(0);
    const t = performance.now();
    for (const p of list) p.buffer.mapAsync(MAP_READ).then(p.resolve, p.reject);
    // The first request waited for every call submitted so far: learn their GPU time from it.
    const waited = performance.now() - t;
    const last = list[list.length - 1].submittedAt;
    if (waited > BLOCKED_MS) {
      this.gpuEstimateMs = 0.7 * this.gpuEstimateMs + 0.3 * (t + waited - last);
    } else {
      this.gpuEstimateMs *= 0.95; // done before asked: probe earlier next time
    }
    this.gpuEstimateMs = Math.min(this.gpuEstimateMs, this.maxWaitMs);
  }

  /** Deferred mode: requests the pending maps after about the calls' GPU time, if no call came. */
  private schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      const t = performance.now();
      if (this.profile) this.profile.byTimer += this.unrequested.length;
      this.requestPending();
      if (this.profile) this.profile.request += performance.now() - t;
    }, Math.floor(this.gpuEstimateMs * this.lateFactor)); // lateFactor 1: early rather than late
  }

  /** Destroys the staging buffers; calls still pending are rejected. */
  destroy(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    for (const p of this.unrequested.splice(0)) {
      p.reject(new KibitzError("bad_state", "the network was disposed with a call in flight"));
    }
    for (const b of this.all) b.destroy();
    this.all.length = 0;
    this.free.clear();
  }
}

/**
 * The map mode: KIBITZ_NN_MAP ("eager", "deferred" or "grouped") where set, else grouped on
 * hardware adapters (H200, session 30: 16 batch-1 calls in flight, 8.09 calls per readback floor
 * against 7.58 deferred and 5.32 eager; batch 8: 2.17 against 2.13) and eager on software ones,
 * whose queue.submit runs the work before it returns (llvmpipe measured: a 100 ms pass returns
 * from submit after about 100 ms), so nothing could overlap.
 */
export function defaultMapMode(ctx: GpuContext): MapMode {
  const v = envValue("KIBITZ_NN_MAP");
  if (v === "eager" || v === "deferred" || v === "grouped") return v;
  return ctx.report.isFallback ? "eager" : "grouped";
}

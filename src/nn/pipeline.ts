import { KibitzError } from "../errors.ts";
import type { NetBatch, NetOutputs, PolicyValueNet } from "./net.ts";

/**
 * Keeps up to `depth` inference calls of one network in flight, so that the host's readback
 * round trip (11.4 ms through Deno's WebGPU, whatever the work) overlaps the GPU work of the next
 * calls: a caller (e.g. a batched MCTS evaluator) submits a batch as soon as it has one and awaits
 * its promise later. Calls past `depth` wait for a slot; results come back in submission order of
 * the GPU queue. GpuNet's calls queue their upload, plan and readback copy without yielding, so any
 * number of them may overlap; on the CPU backend calls simply run one after another.
 */
export class InferencePipeline {
  private running = 0;
  private peak = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly net: PolicyValueNet, readonly depth = 8) {
    if (!Number.isInteger(depth) || depth < 1) {
      throw new KibitzError("bad_args", `pipeline depth must be a positive integer, got ${depth}`);
    }
  }

  /** Calls in flight now. */
  get inFlight(): number {
    return this.running;
  }

  /** Most calls ever in flight at once. */
  get maxInFlight(): number {
    return this.peak;
  }

  /** Evaluates a batch once a slot is free; resolves with its outputs. */
  async evaluateAsync(batch: NetBatch): Promise<NetOutputs> {
    while (this.running >= this.depth) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    try {
      return await this.net.infer(batch);
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Resolves when no call is in flight or waiting. */
  async drain(): Promise<void> {
    while (this.running > 0 || this.waiting.length > 0) {
      await new Promise<void>((resolve) => setTimeout(resolve, 1));
    }
  }
}

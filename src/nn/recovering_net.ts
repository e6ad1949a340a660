// A network for long inference runs (self-play, arenas) that outlives its GPU device: when the
// device is lost (a driver reset, a browser's GPU process restarting), the network is built again
// from the host's weights (on a new device, or wherever `build` puts it) and the call retried.
import { isKibitzError } from "../errors.ts";
import { LOST_DEVICE_RETRIES, lostDeviceSummary } from "../gpu/device.ts";
import type { SgdHyper } from "./backend.ts";
import type { NetBatch, NetOutputs, PolicyValueNet, TrainStats } from "./net.ts";
import type { NetWeights } from "./params.ts";

/**
 * Delegates to a network and, when inference fails with gpu_lost, replaces it with `build()`'s
 * (at most `maxRecoveries` times) and retries; calls in flight on the lost device share one
 * rebuild. Training is not retried: weights trained on the lost device are gone with it.
 */
export class RecoveringNet implements PolicyValueNet {
  /** Rebuilds so far. */
  recoveries = 0;
  private rebuilding: Promise<PolicyValueNet> | null = null;

  constructor(
    private net: PolicyValueNet,
    private readonly build: () => Promise<PolicyValueNet>,
    private readonly onRecover: (message: string) => void = () => {},
    private readonly maxRecoveries = LOST_DEVICE_RETRIES,
  ) {}

  get config() {
    return this.net.config;
  }
  get backend() {
    return this.net.backend;
  }
  get halfPlanes() {
    return this.net.halfPlanes;
  }
  get memoryCap() {
    return this.net.memoryCap;
  }

  /** Inference, on a rebuilt network when the device is lost. */
  async infer(batch: NetBatch): Promise<NetOutputs> {
    const net = this.net;
    try {
      return await net.infer(batch);
    } catch (e) {
      if (!isKibitzError(e, "gpu_lost")) throw e;
      return (await this.replace(net, e)).infer(batch);
    }
  }

  /** The network that replaces `lost` (one rebuild however many calls failed on it). */
  private replace(lost: PolicyValueNet, cause: Error): Promise<PolicyValueNet> {
    if (this.net !== lost) return Promise.resolve(this.net);
    if (this.recoveries >= this.maxRecoveries) return Promise.reject(cause);
    this.rebuilding ??= (async () => {
      try {
        const fresh = await this.build();
        lost.dispose();
        this.net = fresh;
        this.recoveries++;
        this.onRecover(
          `${lostDeviceSummary(cause)}; the network was rebuilt on the ${fresh.backend} ` +
            `(recovery ${this.recoveries} of at most ${this.maxRecoveries}) and the call retried`,
        );
        return fresh;
      } finally {
        this.rebuilding = null;
      }
    })();
    return this.rebuilding;
  }

  trainStep(batch: NetBatch, hyper: SgdHyper, last?: boolean): Promise<TrainStats> {
    return this.net.trainStep(batch, hyper, last);
  }
  weights(): Promise<NetWeights> {
    return this.net.weights();
  }
  velocity(): Promise<Map<string, Float32Array>> {
    return this.net.velocity();
  }
  setVelocity(v: Map<string, Float32Array>): void {
    this.net.setVelocity(v);
  }
  prepare(sizes: readonly number[]): Promise<void> {
    return this.net.prepare?.(sizes) ?? Promise.resolve();
  }
  dispose(): void {
    this.net.dispose();
  }
}

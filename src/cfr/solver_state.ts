// What a CfrSolver must keep to continue a solve later exactly where it stopped: its counters, its
// discount (a warm start may have moved where the average resets) and the raw bytes of its stores.
// Everything else an iteration uses (discount factors, pruning, rounding keys) is a function of the
// iteration number and the options, so a restored solver continues bit for bit.
import { KibitzError } from "../errors.ts";
import type { QuantStore } from "../quant/mod.ts";
import type { DiscountParams } from "./schedule.ts";
import type { CfrSolver } from "./solver.ts";

/** One store's shape as a checkpoint records it. */
export interface StoreShape {
  name: "regrets" | "strategy" | "predicted";
  format: string;
  /** Elements and blocks. */
  n: number;
  blocks: number;
  /** Bytes of its payload and of its per-block scales, in that order in the file. */
  wordBytes: number;
  scaleBytes: number;
}

/** A solver's state apart from its stores' bytes: JSON, the head of a checkpoint. */
export interface SolverStateHead {
  algorithm: string;
  iteration: number;
  nodeHandVisits: number;
  discount: DiscountParams;
  stores: StoreShape[];
}

/** `s`'s stores in checkpoint order, named. */
function namedStores(s: CfrSolver): [StoreShape["name"], QuantStore][] {
  const out: [StoreShape["name"], QuantStore][] = [];
  out.push(["regrets", s.regrets], ["strategy", s.strategy]);
  if (s.predicted) out.push(["predicted", s.predicted]);
  return out;
}

/** The head of `s`'s state now (see SolverStateHead). */
export function solverStateHead(s: CfrSolver): SolverStateHead {
  return {
    algorithm: s.algorithm,
    iteration: s.iteration,
    nodeHandVisits: s.nodeHandVisits,
    discount: { ...s.discount },
    stores: namedStores(s).map(([name, st]) => ({
      name,
      format: st.format,
      n: st.n,
      blocks: st.blocks,
      wordBytes: st.words.byteLength,
      scaleBytes: st.scales.byteLength,
    })),
  };
}

/** Byte views of `s`'s store arrays in checkpoint order (payload, then scales, per store): no copy. */
export function solverStateViews(s: CfrSolver): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const [, st] of namedStores(s)) {
    out.push(new Uint8Array(st.words.buffer, st.words.byteOffset, st.words.byteLength));
    out.push(new Uint8Array(st.scales.buffer, st.scales.byteOffset, st.scales.byteLength));
  }
  return out;
}

/** Bytes of a state's store arrays (what follows the head in a checkpoint). */
export function stateBytes(head: SolverStateHead): number {
  let b = 0;
  for (const st of head.stores) b += st.wordBytes + st.scaleBytes;
  return b;
}

/**
 * Checks that a recorded head describes stores shaped like `s`'s (same algorithm, formats and
 * sizes), so its bytes can be read into them; the error names `where` and the first difference.
 */
export function checkStateFits(s: CfrSolver, head: SolverStateHead, where: string): void {
  const mine = solverStateHead(s);
  const fail = (why: string): never => {
    throw new KibitzError("shape_mismatch", `${where}: ${why}`);
  };
  if (head.algorithm !== mine.algorithm) {
    fail(`it was written by ${head.algorithm}, this solve runs ${mine.algorithm}`);
  }
  if (!Array.isArray(head.stores) || head.stores.length !== mine.stores.length) {
    fail(`it holds ${head.stores?.length} stores, this solve has ${mine.stores.length}`);
  }
  for (let i = 0; i < mine.stores.length; i++) {
    const a = head.stores[i], b = mine.stores[i];
    for (const k of ["name", "format", "n", "blocks", "wordBytes", "scaleBytes"] as const) {
      if (a[k] !== b[k]) {
        fail(`its ${b.name} store has ${k} ${a[k]}, this solve's has ${b[k]} (another tree?)`);
      }
    }
  }
  for (const k of ["iteration", "nodeHandVisits"] as const) {
    if (!(Number.isSafeInteger(head[k]) && head[k] >= 0)) {
      fail(`its ${k} ${head[k]} is not a count`);
    }
  }
  const d = head.discount as unknown as Record<string, unknown> | null;
  if (typeof d !== "object" || d === null) fail("it has no discount");
  for (const [k, v] of Object.entries(mine.discount)) {
    if (typeof d![k] !== typeof v) fail(`its discount's ${k} is ${JSON.stringify(d![k])}`);
  }
  if (d!.resetFrom !== undefined && typeof d!.resetFrom !== "number") {
    fail(`its discount's resetFrom is ${JSON.stringify(d!.resetFrom)}`);
  }
}

/** Sets `s`'s counters and discount from a head (its stores' bytes are read separately). */
export function applyStateHead(s: CfrSolver, head: SolverStateHead): void {
  s.iteration = head.iteration;
  s.nodeHandVisits = head.nodeHandVisits;
  Object.assign(s.discount, head.discount);
  if (head.discount.resetFrom !== undefined) {
    s.options.discount = { ...s.options.discount, resetFrom: head.discount.resetFrom };
  }
}

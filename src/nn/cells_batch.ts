import type { NetConfig } from "./config.ts";
import type { TrainBatch } from "./net.ts";
import { rng } from "./tensor.ts";
import { syntheticBatch } from "./train.ts";

/**
 * A synthetic batch for a cells net (tests, benches): syntheticBatch's planes, mask and targets,
 * and a move table of `width` entries a position, one per legal move in a shuffled order with
 * random cells (about a tenth of the a terms, four tenths of the b terms and a tenth of the slots
 * -1), the other rows padding; legal moves past `width` (target moves first) leave the mask.
 */
export function syntheticCellsBatch(
  cfg: NetConfig,
  size: number,
  width: number,
  seed: number,
): TrainBatch & { moveCells: Float32Array; moveCellsWidth: number } {
  if (!cfg.cells) throw new Error("syntheticCellsBatch needs a cells config");
  const b = syntheticBatch(cfg, size, seed), next = rng(seed + 100);
  const per = cfg.cells.planes * cfg.height * cfg.width, biases = cfg.cells.biases;
  const pick = (n: number) => Math.floor(next() * n);
  const t = new Float32Array(size * width * 4).fill(-1);
  for (let r = 0; r < size; r++) {
    const rows = [...Array(width).keys()];
    for (let i = rows.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [rows[i], rows[j]] = [rows[j], rows[i]];
    }
    let k = 0;
    // The target moves first, so that a narrow table keeps them.
    const order = [...Array(cfg.moves).keys()].sort((x, y) =>
      b.policy[r * cfg.moves + y] - b.policy[r * cfg.moves + x] || x - y
    );
    for (const m of order) {
      const at = r * cfg.moves + m;
      if (!(b.mask[at] > 0)) continue;
      if (k === width) {
        b.mask[at] = 0;
        continue;
      }
      const e = (r * width + rows[k++]) * 4;
      t[e] = m;
      t[e + 1] = next() < 0.1 ? -1 : pick(per);
      t[e + 2] = next() < 0.4 ? -1 : pick(per);
      t[e + 3] = next() < 0.1 ? -1 : pick(biases);
    }
  }
  return { ...b, moveCells: t, moveCellsWidth: width };
}

// Which cells a residual tower must compute for one image whose input is the same along each row
// except at a few cells (a Hive position: a small hive in a 26 x 26 window, and input planes that
// are zero, constant, or one value per row elsewhere). A 3 x 3 convolution of such an input is
// again one value per row except within one cell of the differing cells: so each layer computes
// the differing cells (the previous layer's dilated by one, the outermost columns always, as the
// zero padding makes them differ) and one other cell per row, and copies that cell's value over
// the rest of its row. Every computed value takes the dense kernel's operations in its order, so
// the tower's output is the same to the bit.

/** The cells one layer computes and the copies that complete its rows. */
export interface LayerPlan {
  /** Output indices (row * rowW + column) of the cells computed, ascending. */
  cells: Int32Array;
  /** (start, count, source) triples: cells [start, start + count) take cell source's value. */
  fills: Int32Array;
}

// The plans' buffers, reused by the next call of the same size (the search plans one image at a
// time and runs each plan before the next).
let scratch:
  | { key: string; d: Int32Array; next: Int32Array; cells: Int32Array; fills: Int32Array }
  | null = null;

/**
 * Per layer 1..layers, the plan for an image of h x w cells (w <= 30) in rows of rowW >= w
 * values, whose input differs from one value per row only at the cells set in `rows` (bit q of
 * rows[r] for cell (r, q)). The plans' arrays are valid until the next call.
 */
export function towerPlan(
  rows: ArrayLike<number>,
  h: number,
  w: number,
  rowW: number,
  layers: number,
): LayerPlan[] {
  if (w > 30 || rowW < w) throw new RangeError(`towerPlan: width ${w}, row ${rowW}`);
  const full = (1 << w) - 1, perCells = h * w, perFills = 3 * h * ((w + 1) >> 1);
  const key = `${h}x${w}x${layers}`;
  if (scratch?.key !== key) {
    scratch = {
      key,
      d: new Int32Array(h),
      next: new Int32Array(h),
      cells: new Int32Array(layers * perCells),
      fills: new Int32Array(layers * perFills),
    };
  }
  let d = scratch.d, next = scratch.next;
  for (let r = 0; r < h; r++) d[r] = (rows[r] | 1 | (1 << (w - 1))) & full;
  const plans: LayerPlan[] = [];
  for (let l = 0; l < layers; l++) {
    for (let r = 0; r < h; r++) {
      const m = d[r] | (r > 0 ? d[r - 1] : 0) | (r + 1 < h ? d[r + 1] : 0);
      next[r] = (m | (m << 1) | (m >>> 1)) & full;
    }
    [d, next] = [next, d];
    const cells = scratch.cells.subarray(l * perCells, (l + 1) * perCells);
    const fills = scratch.fills.subarray(l * perFills, (l + 1) * perFills);
    plans.push(layerPlan(d, h, w, rowW, full, cells, fills));
  }
  return plans;
}

// The first cell of row mask m outside it (-1 when the row is full).
function firstClear(m: number, full: number): number {
  const free = ~m & full;
  return free === 0 ? -1 : 31 - Math.clz32(free & -free);
}

function layerPlan(
  d: Int32Array,
  h: number,
  w: number,
  rowW: number,
  full: number,
  cells: Int32Array,
  fills: Int32Array,
): LayerPlan {
  let nc = 0, nf = 0;
  for (let r = 0; r < h; r++) {
    const rep = firstClear(d[r], full), base = r * rowW;
    // The differing cells and the row's first other cell, whose value the rest of the row takes.
    let m = d[r] | (rep >= 0 ? 1 << rep : 0);
    // The rest of the row, in runs: each takes the source cell's value.
    let f = ~m & full;
    while (m !== 0) {
      const low = m & -m;
      cells[nc++] = base + 31 - Math.clz32(low);
      m ^= low;
    }
    while (f !== 0) {
      const a = 31 - Math.clz32(f & -f);
      let b = a;
      while (b < w && (f >>> b) & 1) b++;
      f &= ~(((1 << (b - a)) - 1) << a);
      fills[nf++] = base + a;
      fills[nf++] = b - a;
      fills[nf++] = base + rep;
    }
  }
  return { cells: cells.subarray(0, nc), fills: fills.subarray(0, nf) };
}

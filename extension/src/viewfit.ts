/**
 * Where a view of a drawing too wide to show whole may end: a scale (and a pan) at which the
 * right edge of the viewport falls between nodes, never through one. Pure geometry, in the
 * drawing's own units, so the browser tests' measure and this agree by construction.
 */

/** A node's box in the drawing's units (scale 1, origin at the drawing's top left). */
export interface IBox {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** A view: the scale and the pan (pixels; 0, 0 shows the drawing's top left corner). */
export interface IView {
  scale: number;
  tx: number;
  ty: number;
}

/** Room left around the first nodes shown, in the drawing's units. */
const MARGIN = 8;

/** The boxes inside the vertical band [top, top + height). */
function inBand(boxes: IBox[], top: number, height: number): IBox[] {
  return boxes.filter(b => b.top < top + height && b.bottom > top);
}

/** Whether a box of `band` straddles the vertical line at `x`. */
function straddles(band: IBox[], x: number): boolean {
  return band.some(b => b.left < x && b.right > x);
}

/** Whether a box lies whole inside [x0, x1] by [y0, y1]. */
function anyWhole(boxes: IBox[], x0: number, x1: number, y0: number, y1: number): boolean {
  return boxes.some(b => b.left >= x0 && b.right <= x1 && b.top >= y0 && b.bottom <= y1);
}

/**
 * The view, at a scale in [lo, hi], that shows at least one whole node and whose right edge
 * cuts no node of the visible band.
 *
 * The view starts at the first nodes (the top, then the left of the nodes that band shows),
 * at the smallest scale that cuts nothing (the most of the drawing, each label at least as
 * large as at `lo`); else, at `lo`, it pans right to the first place where it both starts and
 * ends between nodes. `null` when neither exists (say, a node wider than the view).
 */
export function uncutView(boxes: IBox[], vw: number, vh: number, lo: number, hi: number): IView | null {
  if (!boxes.length) {
    return null;
  }
  const y0 = Math.max(0, Math.min(...boxes.map(b => b.top)) - MARGIN);
  const STEPS = 60;
  for (let k = 0; k <= STEPS; k++) {
    const s = lo + (hi - lo) * k / STEPS;
    const band = inBand(boxes, y0, vh / s);
    const x0 = Math.max(0, Math.min(...band.map(b => b.left)) - MARGIN);
    const x1 = x0 + vw / s;
    if (!straddles(band, x1) && anyWhole(band, x0, x1, y0, y0 + vh / s)) {
      return { scale: s, tx: -x0 * s, ty: -y0 * s };
    }
  }
  const band = inBand(boxes, y0, vh / lo);
  const ends = band.map(b => b.right + 1).sort((a, b) => a - b);
  for (const x1 of ends) {
    const x0 = x1 - vw / lo;
    if (x0 >= 0 && !straddles(band, x1) && !straddles(band, x0) && anyWhole(band, x0, x1, y0, y0 + vh / lo)) {
      return { scale: lo, tx: -x0 * lo, ty: -y0 * lo };
    }
  }
  return null;
}

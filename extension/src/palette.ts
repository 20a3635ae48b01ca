/**
 * Block colours for any number of blocks, as fusionlab/explore/palette.py draws them: block b's hue is
 * b - 1 turns of the golden angle from a blue (no two blocks share a hue; neighbours are far apart on
 * the wheel) and its tone is one of six, (b - 1) mod 6: blocks whose hues come close are a Fibonacci
 * number apart, never a multiple of 6 below 144, so they differ in tone. The theme picks each tone's
 * saturation and lightness (pale in the light theme, dark in the dark one) in base.css; the hue is set
 * on the element.
 */

/** degrees between the hues of consecutive blocks (360 / φ²) */
export const GOLDEN_ANGLE = 137.50776405003785;
/** the hue of block 1 */
export const FIRST_HUE = 214;

/** The hue (degrees) of block `b` (1-based). */
export function blockHue(b: number): number {
  return (FIRST_HUE + (b - 1) * GOLDEN_ANGLE) % 360;
}

/** how many tones block colours cycle through (two lightnesses times three saturations) */
export const TONES = 6;

/** Block `b`'s tone (0 ... TONES - 1). */
export function blockTone(b: number): number {
  return (((b - 1) % TONES) + TONES) % TONES;
}

/**
 * Paint `el` (and what it draws with var(--fl-block)) in block `b`'s colour; `listed` is the report's own
 * colour for the block, used in the light theme (already checked to be a plain colour).
 */
export function paintBlock(el: HTMLElement | SVGElement, b: number, listed?: string): void {
  for (let t = 0; t < TONES; t++) {
    el.classList.remove(`fl-v${t}`);
  }
  el.classList.add('fl-paint', `fl-v${blockTone(b)}`);
  el.style.setProperty('--fl-h', blockHue(b).toFixed(2));
  // 'initial' (not inherited from a painted parent) makes var(--fl-pb, ...) take the rule's colour
  el.style.setProperty('--fl-pb', listed ?? 'initial');
}

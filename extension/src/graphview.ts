/**
 * The WSP graph pane: a drawing built from the report's data, laid out off the page's
 * thread, in a viewport with wheel zoom, drag to pan, fit, 100 %, a full-width mode, block
 * level (one node per block, edges merged and counted) chosen when instructions are too
 * dense, blocks expanded on click, and a focus on one block's neighbourhood.
 */

import { clear, h } from './dom';
import { autoLevel, buildDot, countEdges, IGraphData, Level } from './dotgen';
import { IBox, uncutView } from './viewfit';
import { annotateSvg, layout, LayoutSuperseded, LayoutTimeout, sanitizeSvg } from './graph';
import { IReplayFrame } from './steps';

/** Seconds a layout may take before its worker is stopped. */
export const LAYOUT_SECONDS = 20;
/** Above this many edges a layout waits for a click. */
export const MAX_AUTO_EDGES = 2500;
const MIN_SCALE = 0.05;
/** A program of at most this many instructions keeps the instruction level however wide it draws. */
export const TEACHING_SIZE = 40;
/** ... at full width, unless that makes it smaller than this (then the block level) */
export const SMALL_SCALE = 0.4;
/** Below this scale labels are too small to read: a first view does not go below it. */
const READABLE_SCALE = 0.5;
const MAX_SCALE = 4;
const VIEW_HEIGHT = 520;
/** The graph area is never shorter than this (a short drawing is not squeezed into a strip). */
export const MIN_HEIGHT = 300;
const WIDE_HEIGHT = 760;

export interface IGraphCallbacks {
  hover(n: number | null): void;
  selectBlock(b: number): void;
  /** paint an element in block `b`'s colour */
  paint(el: SVGElement, b: number): void;
  /** called when the user makes the pane full width or back */
  wide(on: boolean): void;
}

export type LevelChoice = 'auto' | Level;

/** What a re-render of the same report keeps of the graph view. */
export interface IGraphState {
  levelChoice: LevelChoice;
  expanded: number[];
  focus: number | null;
  wide: boolean;
  scale: number;
  tx: number;
  ty: number;
  /** the DOT last drawn: the same drawing again keeps scale and pan */
  dot: string;
  /** the automatic choices made for a drawing too wide to read (full width, then blocks) */
  autoWide?: boolean;
  tooWide?: boolean;
  leftToRight?: boolean;
}

export class GraphView {
  readonly node: HTMLDivElement;
  readonly toolbar: HTMLDivElement;
  private viewport: HTMLDivElement;
  private canvas: HTMLDivElement;
  private message: HTMLDivElement;
  private data: IGraphData | null = null;
  private levelChoice: LevelChoice = 'auto';
  private expanded = new Set<number>();
  private focus: number | null = null;
  private selected: number | null = null;
  private size = { width: 0, height: 0 };
  private scale = 1;
  private tx = 0;
  private ty = 0;
  private wide = false;
  private forceLarge = false;
  private token = 0;
  private svg: SVGSVGElement | null = null;
  private lastDot = '';
  private levelSelect: HTMLSelectElement;
  private focusButton: HTMLButtonElement;
  private collapseButton: HTMLButtonElement;
  private wideButton: HTMLButtonElement;
  private scaleLabel: HTMLSpanElement;
  private omitted: HTMLDivElement;
  private clipHint: HTMLDivElement;
  private drag: { x: number; y: number; tx: number; ty: number; moved: boolean } | null = null;
  /** set when the wide mode was chosen for a drawing too wide to read beside the listing */
  private autoWide = false;
  /** set when the instruction level was too wide to read even at full width (auto: blocks) */
  private tooWide = false;
  /** drawn left to right: too wide to read at the block level from top to bottom */
  private leftToRight = false;
  private overlay: IReplayFrame | null = null;
  private overlayColour: (instruction: number) => number = () => 1;

  constructor(private callbacks: IGraphCallbacks) {
    const button = (label: string, title: string, action: string, fn: () => void) => {
      const b = h('button', 'fl-button', { type: 'button', title, 'data-fl-action': action }, label);
      b.addEventListener('click', fn);
      return b;
    };
    this.levelSelect = h('select', 'fl-select', { 'data-fl-control': 'level', 'aria-label': 'graph level' },
      h('option', '', { value: 'auto' }, 'auto'),
      h('option', '', { value: 'blocks' }, 'blocks'),
      h('option', '', { value: 'instructions' }, 'instructions'));
    this.levelSelect.addEventListener('change', () => {
      this.levelChoice = this.levelSelect.value as LevelChoice;
      this.tooWide = false;
      this.leftToRight = false;
      this.expanded.clear();
      void this.draw();
    });
    this.focusButton = button('focus block', 'show the selected block and its neighbours only', 'focus',
      () => this.setFocus(this.focus === null ? this.selected : null));
    this.collapseButton = button('collapse all', 'draw every block as one node again', 'collapse', () => {
      this.expanded.clear();
      void this.draw();
    });
    this.wideButton = button('full width', 'give the graph the whole width of the output', 'wide', () => {
      this.setWide(!this.wide);
      this.fit();
    });
    this.scaleLabel = h('span', 'fl-scale', {});
    this.omitted = h('div', 'fl-omitted fl-hint', {});
    this.clipHint = h('div', 'fl-clip-hint fl-hint', {});
    this.clipHint.hidden = true;
    this.toolbar = h('div', 'fl-graph-toolbar', {},
      h('label', '', {}, 'level ', this.levelSelect),
      button('−', 'zoom out', 'zoom-out', () => this.zoomBy(1 / 1.25)),
      button('+', 'zoom in', 'zoom-in', () => this.zoomBy(1.25)),
      button('fit', 'fit the graph to the pane', 'fit', () => this.fit()),
      button('100%', 'show at its natural size', 'actual', () => {
        this.releaseClip();
        this.setScale(1, 0, 0);
      }),
      this.scaleLabel, this.focusButton, this.collapseButton, this.wideButton);
    this.canvas = h('div', 'fl-canvas');
    this.message = h('div', 'fl-message');
    this.viewport = h('div', 'fl-viewport', { tabindex: 0, 'aria-label': 'graph: wheel to zoom, drag to pan' },
      this.canvas);
    this.node = h('div', 'fl-graph', { 'data-fl-graph-state': 'none' }, this.omitted, this.message, this.viewport,
      this.clipHint);
    this.viewport.addEventListener('wheel', ev => this.onWheel(ev), { passive: false });
    this.viewport.addEventListener('pointerdown', ev => this.onPointerDown(ev));
    this.viewport.addEventListener('pointermove', ev => this.onPointerMove(ev));
    this.viewport.addEventListener('pointerup', ev => this.onPointerUp(ev));
    this.viewport.addEventListener('pointercancel', ev => this.onPointerUp(ev));
    // a click that ends a drag is not a click on what lies under the pointer
    this.viewport.addEventListener('click', ev => {
      if (this.drag?.moved) {
        ev.stopPropagation();
        ev.preventDefault();
      }
      this.drag = null;
    }, true);
    this.updateButtons();
  }

  /** The view state worth keeping when the same report is re-rendered. */
  state(): IGraphState {
    return {
      levelChoice: this.levelChoice, expanded: [...this.expanded], focus: this.focus, wide: this.wide,
      scale: this.scale, tx: this.tx, ty: this.ty, dot: this.lastDot, autoWide: this.autoWide, tooWide: this.tooWide,
      leftToRight: this.leftToRight
    };
  }

  restore(state: IGraphState | undefined): void {
    if (!state) {
      return;
    }
    this.levelChoice = state.levelChoice;
    this.levelSelect.value = this.levelChoice;
    this.expanded = new Set(state.expanded);
    this.focus = state.focus;
    this.wide = !!state.wide;
    this.autoWide = !!state.autoWide;
    this.tooWide = !!state.tooWide;
    this.leftToRight = !!state.leftToRight;
    this.lastDot = state.dot;
    this.scale = state.scale;
    this.tx = state.tx;
    this.ty = state.ty;
    this.wideButton.classList.toggle('fl-active', this.wide);
    this.callbacks.wide(this.wide);
  }

  /** Draw at `choice` (as the level menu does). */
  setLevel(choice: LevelChoice): void {
    if (choice === this.levelChoice) {
      return;
    }
    this.levelChoice = choice;
    this.levelSelect.value = choice;
    this.tooWide = false;
    this.leftToRight = false;
    this.expanded.clear();
    void this.draw();
  }

  level(): Level {
    if (!this.data) {
      return 'instructions';
    }
    if (this.levelChoice !== 'auto') {
      return this.levelChoice;
    }
    return this.tooWide ? 'blocks' : autoLevel(this.data);
  }

  /** Draw `data` (a new partition keeps the level choice; expanded blocks and focus reset unless `keep`). */
  setData(data: IGraphData | null, keep = false): Promise<void> {
    const changed = !keep && this.data !== null;
    this.data = data;
    if (changed) {
      this.expanded.clear();
      this.focus = null;
    }
    if (this.focus !== null && data && !data.blocks[this.focus - 1]) {
      this.focus = null;
    }
    return this.draw();
  }

  setSelected(b: number | null): void {
    this.selected = b;
    this.updateButtons();
  }

  setFocus(b: number | null): void {
    this.focus = b;
    void this.draw();
  }

  /** Expand block `b` to its instructions (block level), or collapse it. */
  toggleExpanded(b: number): void {
    if (this.expanded.has(b)) {
      this.expanded.delete(b);
    } else {
      this.expanded.add(b);
    }
    void this.draw();
  }

  private updateButtons(): void {
    this.focusButton.textContent = this.focus === null ? 'focus block' : `show all (focused on block ${this.focus})`;
    this.focusButton.disabled = this.focus === null && this.selected === null;
    this.focusButton.title = this.focus === null
      ? (this.selected === null ? 'select a block first (click it)' : `show block ${this.selected} and its neighbours only`)
      : 'show the whole graph';
    this.focusButton.classList.toggle('fl-active', this.focus !== null);
    this.collapseButton.hidden = this.level() !== 'blocks' || this.expanded.size === 0 || this.focus !== null;
  }

  private async draw(): Promise<void> {
    const token = ++this.token;
    const data = this.data;
    const node = this.node;
    this.updateButtons();
    if (!data) {
      this.show('none', 'No partition to draw.');
      return;
    }
    const level = this.level();
    node.setAttribute('data-fl-level', level);
    node.setAttribute('data-fl-focus', this.focus === null ? '' : String(this.focus));
    const drawn = buildDot(data, { level, expanded: this.expanded, focus: this.focus,
      flow: this.leftToRight ? 'LR' : 'TB' });
    const dot = drawn.dot;
    const edges = countEdges(dot);
    node.setAttribute('data-fl-edges', String(edges));
    this.omitted.textContent = [
      drawn.implied ? `${drawn.implied} implied dependencies not drawn` : '',
      drawn.forbiddenHidden ? `${drawn.forbiddenHidden} fuse-preventing edges not drawn (focus a block to see its own)` : ''
    ].filter(x => x).join(' · ');
    if (edges > MAX_AUTO_EDGES && !this.forceLarge) {
      const go = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'layout' }, 'Lay it out anyway');
      go.addEventListener('click', () => {
        this.forceLarge = true;
        void this.draw();
      });
      this.show('deferred', `This drawing has ${edges} edges: choose block level or focus a block, or `, go);
      return;
    }
    node.setAttribute('data-fl-graph-state', 'loading');
    if (!this.svg) {
      this.show('loading', 'Laying out the graph…');
    }
    let svg: SVGSVGElement;
    try {
      svg = sanitizeSvg(await layout(dot, LAYOUT_SECONDS, this));
    } catch (err) {
      if (token !== this.token || err instanceof LayoutSuperseded) {
        return;
      }
      if (err instanceof LayoutTimeout) {
        const blocks = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'blocks' }, 'draw blocks only');
        blocks.addEventListener('click', () => {
          this.levelChoice = 'blocks';
          this.levelSelect.value = 'blocks';
          this.expanded.clear();
          void this.draw();
        });
        this.show('timeout', `${err.message}: `, level === 'instructions' ? blocks : 'focus a block instead.');
      } else {
        this.show('error', `The graph could not be laid out: ${String((err as Error)?.message ?? err)}`);
      }
      return;
    }
    if (token !== this.token) {
      return;
    }
    this.size = annotateSvg(svg);
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.cluster[data-block], g.node[data-block]'))) {
      this.callbacks.paint(g, Number(g.getAttribute('data-block')));
    }
    this.bind(svg);
    this.applyOverlay(svg);
    clear(this.canvas);
    this.canvas.appendChild(svg);
    this.svg = svg;
    this.message.hidden = true;
    this.viewport.hidden = false;
    node.setAttribute('data-fl-graph-state', 'ready');
    node.setAttribute('data-fl-blocks-drawn', String(svg.querySelectorAll('g.node[data-block], g.cluster[data-block]').length));
    // the same drawing again (a re-render of the same report) keeps its zoom and pan
    const same = dot === this.lastDot;
    this.lastDot = dot;
    this.layoutViewport();
    if (same) {
      this.setScale(this.scale, this.tx, this.ty);
    } else {
      this.initialView();
    }
  }

  private show(state: string, ...content: (Node | string)[]): void {
    this.node.setAttribute('data-fl-graph-state', state);
    clear(this.message);
    this.message.append(...content);
    this.message.hidden = false;
    if (state !== 'loading') {
      clear(this.canvas);
      this.svg = null;
      this.viewport.hidden = true;
    }
  }

  private bind(svg: SVGSVGElement): void {
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.node[data-instruction]'))) {
      const n = Number(g.getAttribute('data-instruction'));
      g.addEventListener('mouseenter', () => this.callbacks.hover(n));
      g.addEventListener('click', ev => {
        ev.stopPropagation();
        const cluster = g.closest('g.cluster[data-block]');
        if (cluster) {
          this.callbacks.selectBlock(Number(cluster.getAttribute('data-block')));
        }
      });
    }
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.node[data-block]'))) {
      const b = Number(g.getAttribute('data-block'));
      g.addEventListener('click', ev => {
        ev.stopPropagation();
        this.callbacks.selectBlock(b);
        if (this.focus === null) {
          this.toggleExpanded(b);
        } else {
          this.setFocus(b);
        }
      });
    }
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.cluster[data-block]'))) {
      const b = Number(g.getAttribute('data-block'));
      g.addEventListener('click', () => this.callbacks.selectBlock(b));
      g.addEventListener('dblclick', () => {
        if (this.level() === 'blocks' && this.focus === null && this.expanded.has(b)) {
          this.toggleExpanded(b);
        }
      });
    }
  }

  /**
   * Draw a replay step over the instructions (null: the partition alone): the instructions
   * already fused take the colour `colour` gives them, the others are drawn pale, and the pair
   * the step merged (or split) is outlined. Kept over later drawings until set to null.
   */
  setOverlay(frame: IReplayFrame | null, colour: (instruction: number) => number): void {
    this.overlay = frame;
    this.overlayColour = colour;
    if (this.svg) {
      this.applyOverlay(this.svg);
    }
  }

  private applyOverlay(svg: SVGSVGElement): void {
    const f = this.overlay;
    this.node.setAttribute('data-fl-replay', f ? 'on' : '');
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.node[data-instruction]'))) {
      const i = Number(g.getAttribute('data-instruction'));
      const fused = !!f && f.fused.has(i);
      g.classList.toggle('fl-replay-fused', fused);
      g.classList.toggle('fl-replay-alone', !!f && !fused);
      g.classList.toggle('fl-replay-moved', !!f && f.moved.has(i));
      g.classList.toggle('fl-replay-into', !!f && f.into.has(i));
      if (fused) {
        this.callbacks.paint(g, this.overlayColour(i));
      }
    }
    svg.classList.toggle('fl-replaying', !!f);
  }

  // ------------------------------------------------------------ zoom and pan

  private layoutViewport(): void {
    const max = this.wide ? WIDE_HEIGHT : VIEW_HEIGHT;
    const width = this.viewport.clientWidth || 600;
    const fitWidth = Math.min(1, width / Math.max(1, this.size.width));
    const want = Math.max(MIN_HEIGHT, Math.min(max, this.size.height * fitWidth + 8));
    this.viewport.style.height = `${Math.round(want)}px`;
  }

  /**
   * The first view of a drawing: all of it when its labels stay readable so, else its
   * width (at least half size), from the top: a long graph is scrolled, not shrunk to dots.
   */
  initialView(): void {
    const vw = this.viewport.clientWidth || 600;
    const vh = this.viewport.clientHeight || VIEW_HEIGHT;
    const w = Math.max(1, this.size.width);
    const h = Math.max(1, this.size.height);
    this.releaseClip();
    if (Math.min(vw / w, vh / h) >= READABLE_SCALE) {
      this.fit();
      return;
    }
    if (vw / w < READABLE_SCALE) {
      // too wide to read beside the listing: first the whole width of the output, then the
      // block level (when the level is the automatic one), and only then smaller than readable
      const whole = (this.node.closest('.fl-explorer') as HTMLElement | null)?.clientWidth ?? 0;
      if (!this.wide && !this.autoWide && whole * 0.97 / w >= READABLE_SCALE) {
        this.autoWide = true;
        this.setWide(true);
        this.initialView();
        return;
      }
      // a program of a textbook's size keeps its instructions (the paper's picture), as wide as
      // the output and as large as fits
      const small = !!this.data && this.data.instructions.length <= TEACHING_SIZE;
      if (small && this.level() === 'instructions' && Math.min(1, whole * 0.97 / w) >= SMALL_SCALE) {
        if (!this.wide && !this.autoWide) {
          this.autoWide = true;
          this.setWide(true);
        }
        this.fitWidth(vw, w);
        return;
      }
      if (this.levelChoice === 'auto' && this.level() === 'instructions' && !this.tooWide) {
        this.tooWide = true;
        void this.draw();
        return;
      }
      // a graph too wide to read whole even at the block level opens readable at its top left,
      // ending between two nodes (never through one), and says that it goes on (fit and the
      // wheel show the rest)
      // (from top to bottom its rows are staggered, so every edge of a view cuts some node;
      // from left to right its ranks are columns, and a view can end between two)
      if (this.level() === 'blocks' && this.focus === null && !this.leftToRight) {
        this.leftToRight = true;
        void this.draw();
        return;
      }
      const view = uncutView(this.nodeBoxes(), vw, vh, READABLE_SCALE, 1);
      this.setScale(view?.scale ?? READABLE_SCALE, view?.tx ?? 0, view?.ty ?? 0);
      this.node.setAttribute('data-fl-goes-on', 'right');
      this.clipHint.textContent = 'The graph goes on to the right' + (this.leftToRight ? ' (drawn left to right)' : '') +
        ': drag to pan, or zoom out (−, fit) to see all of it.';
      this.clipHint.hidden = false;
      return;
    }
    const s = Math.max(READABLE_SCALE, Math.min(1, vw / w));
    this.setScale(s, w * s < vw ? (vw - w * s) / 2 : 0, 0);
  }

  /** The drawn nodes' boxes in the drawing's units (scale 1, origin at its top left). */
  private nodeBoxes(): IBox[] {
    const c = this.canvas.getBoundingClientRect();
    const s = this.scale || 1;
    return Array.from(this.canvas.querySelectorAll('g.node')).map(n => {
      const r = n.getBoundingClientRect();
      return { left: (r.left - c.left) / s, right: (r.right - c.left) / s, top: (r.top - c.top) / s, bottom: (r.bottom - c.top) / s };
    });
  }

  /** Hide the note of an automatic choice (the user pans, zooms or chooses). */
  private releaseClip(): void {
    this.clipHint.hidden = true;
    this.node.removeAttribute('data-fl-below-readable');
    this.node.removeAttribute('data-fl-goes-on');
  }

  /** The whole width, smaller than readable if it must be; the view says so then. */
  private fitWidth(vw: number, w: number): void {
    const width = this.viewport.clientWidth || vw;
    const s = Math.max(MIN_SCALE, Math.min(1, width / w));
    this.setScale(s, 0, 0);
    if (s < READABLE_SCALE) {
      this.node.setAttribute('data-fl-below-readable', 'true');
      this.clipHint.textContent = `Zoomed out to ${Math.round(s * 100)}% to show the whole width: ` +
        'zoom in (wheel, +) to read it, or choose the block level.';
      this.clipHint.hidden = false;
    }
  }

  private setWide(on: boolean): void {
    this.releaseClip();
    this.wide = on;
    this.wideButton.classList.toggle('fl-active', this.wide);
    this.callbacks.wide(this.wide);
    this.layoutViewport();
  }

  /** Fit the whole drawing in the viewport (never above 100 %). */
  fit(): void {
    this.releaseClip();
    const vw = this.viewport.clientWidth || 600;
    const vh = this.viewport.clientHeight || VIEW_HEIGHT;
    const s = Math.max(MIN_SCALE, Math.min(1, vw / Math.max(1, this.size.width), vh / Math.max(1, this.size.height)));
    this.setScale(s, (vw - this.size.width * s) / 2, 0);
  }

  zoomBy(factor: number, cx?: number, cy?: number): void {
    this.releaseClip();
    const vw = this.viewport.clientWidth || 600;
    const vh = this.viewport.clientHeight || VIEW_HEIGHT;
    const x = cx ?? vw / 2;
    const y = cy ?? vh / 2;
    const s = Math.max(MIN_SCALE, Math.min(MAX_SCALE, this.scale * factor));
    // the point under (x, y) stays there
    const gx = (x - this.tx) / this.scale;
    const gy = (y - this.ty) / this.scale;
    this.setScale(s, x - gx * s, y - gy * s);
  }

  private setScale(s: number, tx: number, ty: number): void {
    this.scale = s;
    this.tx = tx;
    this.ty = ty;
    this.canvas.style.transform = `translate(${tx}px, ${ty}px) scale(${s})`;
    this.node.setAttribute('data-fl-scale', s.toFixed(3));
    this.scaleLabel.textContent = `${Math.round(s * 100)}%`;
  }

  private onWheel(ev: WheelEvent): void {
    if (!this.svg) {
      return;
    }
    ev.preventDefault();
    const r = this.viewport.getBoundingClientRect();
    this.zoomBy(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }

  private onPointerDown(ev: PointerEvent): void {
    if (ev.button !== 0 || !this.svg) {
      return;
    }
    this.releaseClip();
    this.drag = { x: ev.clientX, y: ev.clientY, tx: this.tx, ty: this.ty, moved: false };
  }

  private onPointerMove(ev: PointerEvent): void {
    const d = this.drag;
    if (!d || !(ev.buttons & 1)) {
      return;
    }
    const dx = ev.clientX - d.x;
    const dy = ev.clientY - d.y;
    if (!d.moved && Math.abs(dx) + Math.abs(dy) > 4) {
      d.moved = true;
      this.viewport.setPointerCapture?.(ev.pointerId);
      this.viewport.classList.add('fl-dragging');
    }
    if (d.moved) {
      this.setScale(this.scale, d.tx + dx, d.ty + dy);
    }
  }

  private onPointerUp(ev: PointerEvent): void {
    this.viewport.classList.remove('fl-dragging');
    if (this.drag && !this.drag.moved) {
      this.drag = null;
    }
    if (this.viewport.hasPointerCapture?.(ev.pointerId)) {
      this.viewport.releasePointerCapture(ev.pointerId);
    }
  }
}

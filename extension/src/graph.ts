/**
 * The WSP graph: DOT (built from the report's data) laid out by Graphviz compiled to
 * WebAssembly in a Web Worker with a time limit, and the SVG it writes rebuilt element by
 * element from an allow-list
 * (no script, no foreign objects, no links, no event handlers, no url() references), so
 * that labels holding user strings can never inject markup.
 */

import { SVG_NS } from './dom';

/** A layout that overran its time limit (the worker running it was stopped). */
export class LayoutTimeout extends Error {
  constructor(readonly seconds: number) {
    super(`the layout took longer than ${seconds} s and was stopped`);
  }
}

interface IJob {
  id: number;
  dot: string;
  /** who asked (a graph pane): its newer layout replaces this one */
  owner: object;
  seconds: number;
  resolve: (svg: string) => void;
  reject: (err: Error) => void;
  timer: number;
}

const layoutCache = new Map<string, string>();
const LAYOUT_CACHE_SIZE = 64;
let worker: Worker | null = null;
/** the layout the worker runs, and those waiting for it, first come first served */
let running: IJob | null = null;
const waiting: IJob[] = [];
let nextId = 0;

/** The worker running Graphviz (its code, with Graphviz's WASM, is a chunk of its own). */
function getWorker(): Worker {
  if (!worker) {
    worker = new Worker(new URL('./layout.worker.js', import.meta.url));
    worker.onmessage = (ev: MessageEvent) => {
      const data = ev.data as { id: number; svg?: string; error?: string };
      if (!running || running.id !== data.id) {
        return;
      }
      const done = running;
      running = null;
      window.clearTimeout(done.timer);
      if (typeof data.svg === 'string') {
        remember(done.dot, data.svg);
        done.resolve(data.svg);
      } else {
        done.reject(new Error(data.error || 'Graphviz failed'));
      }
      next();
    };
    worker.onerror = (ev: ErrorEvent) => {
      stopWorker(new Error(`the layout worker failed: ${ev.message || 'unknown error'}`));
    };
  }
  return worker;
}

/** Stop the worker (and the layout it runs, rejected with `reason`); the next layout starts another. */
function stopWorker(reason: Error): void {
  worker?.terminate();
  worker = null;
  if (running) {
    window.clearTimeout(running.timer);
    const j = running;
    running = null;
    j.reject(reason);
  }
  next();
}

/** Start the first waiting layout when the worker is free (its time limit starts now). */
function next(): void {
  while (!running && waiting.length) {
    const j = waiting.shift()!;
    const hit = layoutCache.get(j.dot);   // the same drawing may have been laid out meanwhile
    if (hit !== undefined) {
      j.resolve(hit);
      continue;
    }
    running = j;
    j.timer = window.setTimeout(() => stopWorker(new LayoutTimeout(j.seconds)), j.seconds * 1000);
    try {
      getWorker().postMessage({ id: j.id, dot: j.dot });
    } catch (err) {
      stopWorker(err as Error);
    }
  }
}

function remember(dot: string, svg: string): void {
  if (layoutCache.size >= LAYOUT_CACHE_SIZE) {
    const first = layoutCache.keys().next().value;
    if (first !== undefined) {
      layoutCache.delete(first);
    }
  }
  layoutCache.set(dot, svg);
}

/** A layout that a newer one replaced (its caller no longer wants it). */
export class LayoutSuperseded extends Error {
  constructor() {
    super('replaced by a newer layout');
  }
}

/** How many layouts wait for the worker (for tests and the pane's message). */
export function layoutsWaiting(): number {
  return waiting.length;
}

/**
 * The SVG text Graphviz writes for `dot`, laid out in a Web Worker within `seconds` of
 * starting (cached by DOT text). One layout runs at a time and the others wait their turn:
 * a notebook's explorers each get their drawing. A newer layout for the same `owner`
 * replaces its older one, waiting or running (WebAssembly cannot be interrupted: the
 * worker running a stale layout is stopped).
 */
export function layout(dot: string, seconds: number, owner: object = {}): Promise<string> {
  const hit = layoutCache.get(dot);
  for (const j of waiting.filter(w => w.owner === owner)) {
    waiting.splice(waiting.indexOf(j), 1);
    j.reject(new LayoutSuperseded());
  }
  if (running && running.owner === owner) {
    stopWorker(new LayoutSuperseded());
  }
  if (hit !== undefined) {
    return Promise.resolve(hit);
  }
  return new Promise<string>((resolve, reject) => {
    waiting.push({ id: ++nextId, dot, owner, seconds, resolve, reject, timer: 0 });
    next();
  });
}

const ELEMENTS = new Set([
  'svg', 'g', 'title', 'polygon', 'polyline', 'path', 'ellipse', 'circle', 'line', 'rect', 'text', 'tspan'
]);
// elements whose children are kept but which are themselves dropped (links)
const UNWRAP = new Set(['a']);
const ATTRIBUTES = new Set([
  'class', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'rx', 'ry', 'width', 'height',
  'viewBox', 'points', 'd', 'transform', 'fill', 'stroke', 'stroke-width', 'stroke-dasharray',
  'stroke-opacity', 'fill-opacity', 'opacity', 'font-family', 'font-size', 'font-weight',
  'font-style', 'text-anchor', 'text-decoration', 'preserveAspectRatio', 'dominant-baseline',
  'baseline-shift'
]);
const BAD_VALUE = /url\s*\(|javascript:|expression\s*\(|<|>/i;

/** Rebuild `source` (an SVG document as text) from allowed elements and attributes only. */
export function sanitizeSvg(source: string): SVGSVGElement {
  const doc = new DOMParser().parseFromString(source, 'image/svg+xml');
  const root = doc.documentElement;
  if (!root || root.localName !== 'svg' || doc.getElementsByTagName('parsererror').length) {
    throw new Error('Graphviz did not return an SVG document');
  }
  const out = document.createElementNS(SVG_NS, 'svg') as SVGSVGElement;
  copyAttributes(root, out);
  copyChildren(root, out);
  return out;
}

function copyAttributes(from: Element, to: Element): void {
  for (const attr of Array.from(from.attributes)) {
    const name = attr.localName;
    if (attr.namespaceURI || !ATTRIBUTES.has(name)) {
      continue;
    }
    if (name === 'class') {
      // Graphviz adds a DOT `class` attribute to its own: keep plain class names only
      const names = attr.value.split(/\s+/).filter(c => /^[A-Za-z0-9_-]+$/.test(c));
      if (names.length) {
        to.setAttribute('class', names.join(' '));
      }
      continue;
    }
    if (BAD_VALUE.test(attr.value)) {
      continue;
    }
    to.setAttribute(name, attr.value);
  }
}

function copyChildren(from: Element, to: Element): void {
  for (const child of Array.from(from.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE || child.nodeType === Node.CDATA_SECTION_NODE) {
      // text is only allowed where SVG shows text
      if (to.localName === 'text' || to.localName === 'tspan' || to.localName === 'title') {
        to.appendChild(document.createTextNode(child.textContent || ''));
      }
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) {
      continue;
    }
    const el = child as Element;
    if (el.namespaceURI !== SVG_NS) {
      continue;
    }
    const name = el.localName;
    if (UNWRAP.has(name)) {
      copyChildren(el, to);
      continue;
    }
    if (!ELEMENTS.has(name)) {
      continue;
    }
    const copy = document.createElementNS(SVG_NS, name);
    copyAttributes(el, copy);
    copyChildren(el, copy);
    to.appendChild(copy);
  }
}

/**
 * Mark the parts of a graph drawn from `buildDot`: instruction nodes `n{k}` get
 * data-instruction, block nodes `b{k}` and clusters `cluster_{k}` data-block, edges
 * between instructions data-source / data-target. Returns the natural size in pixels.
 */
export function annotateSvg(svg: SVGSVGElement): { width: number; height: number } {
  for (const g of Array.from(svg.querySelectorAll('g'))) {
    const title = g.querySelector(':scope > title');
    const name = title ? (title.textContent || '').trim() : '';
    const cls = (g.getAttribute('class') || '').split(/\s+/);
    let m: RegExpExecArray | null;
    if (cls.includes('node')) {
      if ((m = /^n(\d+)$/.exec(name))) {
        g.setAttribute('data-instruction', m[1]);
      } else if ((m = /^b(\d+)$/.exec(name))) {
        g.setAttribute('data-block', m[1]);
      }
    } else if (cls.includes('cluster')) {
      if ((m = /^cluster_(\d+)$/.exec(name))) {
        g.setAttribute('data-block', m[1]);
      }
    } else if (cls.includes('edge')) {
      if ((m = /^n(\d+)->n(\d+)$/.exec(name.replace(/\u2010|\u2011/g, '-')))) {
        g.setAttribute('data-source', m[1]);
        g.setAttribute('data-target', m[2]);
      }
    }
  }
  // Graphviz gives its size in points
  const pt = (v: string | null) => {
    const x = parseFloat(v || '');
    return isFinite(x) && x > 0 ? x * 4 / 3 : 100;
  };
  const size = { width: pt(svg.getAttribute('width')), height: pt(svg.getAttribute('height')) };
  svg.setAttribute('width', String(size.width));
  svg.setAttribute('height', String(size.height));
  svg.setAttribute('preserveAspectRatio', 'xMinYMin meet');
  return size;
}

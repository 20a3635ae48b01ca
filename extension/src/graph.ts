/**
 * The WSP graph: DOT laid out by Graphviz compiled to WebAssembly, loaded on first use
 * as its own chunk, and the SVG it writes rebuilt element by element from an allow-list
 * (no script, no foreign objects, no links, no event handlers, no url() references), so
 * that labels holding user strings can never inject markup.
 */

import { SVG_NS } from './dom';

type GraphvizModule = typeof import('@hpcc-js/wasm-graphviz');
type Graphviz = Awaited<ReturnType<GraphvizModule['Graphviz']['load']>>;

let graphvizPromise: Promise<Graphviz> | null = null;
const layoutCache = new Map<string, string>();
const LAYOUT_CACHE_SIZE = 64;

/** Graphviz, loaded once per page (a separate webpack chunk). */
export function loadGraphviz(): Promise<Graphviz> {
  if (!graphvizPromise) {
    graphvizPromise = import(
      /* webpackChunkName: "fusionlab-graphviz" */ '@hpcc-js/wasm-graphviz'
    ).then(m => m.Graphviz.load());
    graphvizPromise.catch(() => {
      graphvizPromise = null;
    });
  }
  return graphvizPromise;
}

/** The SVG text Graphviz writes for `dot` (cached by DOT text). */
export async function layout(dot: string): Promise<string> {
  const hit = layoutCache.get(dot);
  if (hit !== undefined) {
    return hit;
  }
  const gv = await loadGraphviz();
  // let the page paint "laying out" first: the layout itself holds the thread
  await new Promise(resolve => setTimeout(resolve, 0));
  const svg = gv.layout(dot, 'svg', 'dot');
  if (layoutCache.size >= LAYOUT_CACHE_SIZE) {
    const first = layoutCache.keys().next().value;
    if (first !== undefined) {
      layoutCache.delete(first);
    }
  }
  layoutCache.set(dot, svg);
  return svg;
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
 * Mark the parts of a fusionlab graph: nodes `i{k}` get data-instruction = k + 1,
 * clusters `cluster_{b}` data-block = b + 1 and a colour class, dashed edges the
 * class fl-forbidden, dotted ones fl-weight. Returns the number of clusters.
 */
export function annotateSvg(svg: SVGSVGElement, colours: number): number {
  let clusters = 0;
  for (const g of Array.from(svg.querySelectorAll('g'))) {
    const title = g.querySelector(':scope > title');
    const name = title ? (title.textContent || '').trim() : '';
    const cls = (g.getAttribute('class') || '').split(/\s+/);
    if (cls.includes('node')) {
      const m = /^i(\d+)$/.exec(name);
      if (m) {
        g.setAttribute('data-instruction', String(Number(m[1]) + 1));
      }
    } else if (cls.includes('cluster')) {
      const m = /^cluster_(\d+)$/.exec(name);
      if (m) {
        const b = Number(m[1]);
        g.setAttribute('data-block', String(b + 1));
        g.classList.add(`fl-c${b % colours}`);
        clusters += 1;
      }
    } else if (cls.includes('edge')) {
      const m = /^i(\d+)->i(\d+)$/.exec(name.replace(/&#45;|\u2010|\u2011/g, '-'));
      if (m) {
        g.setAttribute('data-source', String(Number(m[1]) + 1));
        g.setAttribute('data-target', String(Number(m[2]) + 1));
      }
      // Graphviz draws dashed edges (fuse-preventing) with dasharray 5,2 and dotted ones
      // (weight edges between blocks, labelled with their saving) with 1,5
      const dash = g.querySelector('path[stroke-dasharray]')?.getAttribute('stroke-dasharray') || '';
      if (/^1[, ]/.test(dash)) {
        g.classList.add('fl-weight');
      } else if (dash) {
        g.classList.add('fl-forbidden');
      }
    }
  }
  // the graph fits the output area (never larger than Graphviz drew it), or shows at 100%
  const w = parseFloat(svg.getAttribute('width') || '');
  if (isFinite(w)) {
    svg.setAttribute('data-fl-width', String(w));
  }
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  svg.setAttribute('preserveAspectRatio', 'xMidYMin meet');
  return clusters;
}

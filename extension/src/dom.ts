/**
 * Small DOM builders. Text only ever goes in through textContent / createTextNode, so
 * nothing from a report is parsed as HTML.
 */

export const SVG_NS = 'http://www.w3.org/2000/svg';

type Child = Node | string | null | undefined | false;

export interface IAttrs {
  [name: string]: string | number | boolean | null | undefined;
}

function setAttrs(el: Element, attrs?: IAttrs): void {
  if (!attrs) {
    return;
  }
  for (const name of Object.keys(attrs)) {
    const value = attrs[name];
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (/^on/i.test(name)) {
      throw new Error('event handler attributes are not allowed');
    }
    el.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/** An HTML element; `cls` is its class list, `children` text or nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  attrs?: IAttrs,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (cls) {
    el.className = cls;
  }
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element. */
export function s(tag: string, attrs?: IAttrs, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Remove every child of `el`. */
export function clear(el: Element): void {
  while (el.firstChild) {
    el.removeChild(el.firstChild);
  }
}

/** A compact number: integers as they are, others with 4 significant digits. */
export function fmt(x: unknown): string {
  if (typeof x !== 'number' || !isFinite(x)) {
    return x === null || x === undefined ? '' : String(x);
  }
  if (Number.isInteger(x)) {
    return String(x);
  }
  return x.toPrecision(4).replace(/\.?0+$/, '');
}

/** A cost as the fallback and the CLI write it: integers with thousands separators (33,486,144). */
export function fmtCost(x: unknown): string {
  return typeof x === 'number' && Number.isInteger(x) ? x.toLocaleString('en-US') : fmt(x);
}

/** Seconds with a readable unit. */
export function fmtSeconds(x: unknown): string {
  if (typeof x !== 'number' || !isFinite(x)) {
    return '';
  }
  if (x < 1e-3) {
    return `${fmt(x * 1e6)} µs`;
  }
  if (x < 1) {
    return `${fmt(x * 1e3)} ms`;
  }
  return `${fmt(x)} s`;
}

/** "1–4, 7, 9–10": numbers as runs (the listing's blocks, a replay step's instructions). */
export function ranges(ns: Iterable<number>): string {
  const sorted = [...ns].sort((a, b) => a - b);
  const out: string[] = [];
  for (let k = 0; k < sorted.length; k++) {
    let j = k;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) {
      j++;
    }
    out.push(j > k ? `${sorted[k]}–${sorted[j]}` : String(sorted[k]));
    k = j;
  }
  return out.join(', ');
}

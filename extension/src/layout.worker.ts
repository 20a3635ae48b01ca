/**
 * A Web Worker that lays out DOT with Graphviz compiled to WebAssembly, so that a large
 * graph never holds the page's thread; the page terminates it when a layout overruns.
 * Messages in: `{id, dot}`; out: `{id, svg}` or `{id, error}`.
 */

import { Graphviz } from '@hpcc-js/wasm-graphviz';

type Loaded = Awaited<ReturnType<typeof Graphviz.load>>;

interface IWorkerScope {
  onmessage: ((ev: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
}

const scope = self as unknown as IWorkerScope;
let graphviz: Promise<Loaded> | null = null;

scope.onmessage = async (ev: MessageEvent) => {
  const { id, dot } = ev.data as { id: number; dot: string };
  try {
    graphviz = graphviz || Graphviz.load();
    const gv = await graphviz;
    scope.postMessage({ id, svg: gv.layout(dot, 'svg', 'dot') });
  } catch (err) {
    scope.postMessage({ id, error: String((err as Error)?.message ?? err) });
  }
};

/**
 * The kernel channel of the explorer's contract (docs/explorer-protocol.md): a Jupyter comm
 * with target `fusionlab.explorer`, opened with `{"id": report id}`. A MIME renderer has no
 * kernel handle: the plugin (plugin.ts) registers the application's shell here, and a
 * renderer finds the notebook panel holding its node, and that panel's kernel.
 *
 * The JupyterLab objects are typed structurally (only what is used), so the extension needs
 * no build-time dependency on the notebook packages; at run time they are JupyterLab's own.
 */

export const COMM_TARGET = 'fusionlab.explorer';

export interface ISignalLike<T> {
  connect(fn: (sender: T, args: any) => void, thisArg?: any): boolean;
  disconnect(fn: (sender: T, args: any) => void, thisArg?: any): boolean;
}

export interface IFutureLike {
  done: Promise<unknown>;
}

export interface ICommLike {
  readonly commId: string;
  readonly isDisposed: boolean;
  open(data?: unknown, metadata?: unknown): IFutureLike;
  send(data: unknown): IFutureLike;
  close(data?: unknown): IFutureLike;
  onMsg: (msg: any) => void | PromiseLike<void>;
  onClose: (msg: any) => void | PromiseLike<void>;
}

export interface IKernelLike {
  readonly id: string;
  readonly isDisposed: boolean;
  readonly status?: string;
  readonly statusChanged?: ISignalLike<IKernelLike>;
  createComm(targetName: string, commId?: string): ICommLike;
}

export interface ISessionContextLike {
  readonly session: { kernel: IKernelLike | null } | null;
  readonly kernelChanged: ISignalLike<ISessionContextLike>;
}

interface IShellLike {
  widgets(area?: string): Iterable<{ node: HTMLElement; sessionContext?: ISessionContextLike }>;
}

let shell: IShellLike | null = null;

/** Called by the plugin: the shell whose notebook panels renderers look in. */
export function registerShell(s: IShellLike): void {
  shell = s;
}

/** The session of the notebook panel holding `node`, when the plugin runs and it has one. */
export function findSession(node: HTMLElement): ISessionContextLike | null {
  if (!shell || !node.isConnected) {
    return null;
  }
  for (const w of Array.from(shell.widgets('main'))) {
    if (w.sessionContext && w.node.contains(node)) {
      return w.sessionContext;
    }
  }
  return null;
}

export type ChannelState = 'none' | 'connecting' | 'open' | 'unavailable';

export interface IReply {
  request?: unknown;
  ok: boolean;
  message: string;
  [key: string]: unknown;
}

/** One comm to the kernel for one report, shared by every renderer of that report. */
export class KernelChannel {
  state: ChannelState = 'connecting';
  detail = '';
  private comm: ICommLike | null = null;
  private pending = new Map<number, { resolve: (r: IReply) => void }>();
  private next = 0;
  private listeners = new Set<() => void>();

  constructor(readonly kernel: IKernelLike, readonly reportId: string) {
    kernel.statusChanged?.connect(this.onStatus, this);
  }

  private onStatus(_: IKernelLike, status: string): void {
    // a restarted kernel has forgotten this report and the comm
    if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
      this.comm = null;
      this.fail(`the kernel ${status === 'dead' ? 'died' : 'restarted'}: run the cell again`);
    }
  }

  /** Called whenever the state changes. Returns a function that stops listening. */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private setState(state: ChannelState, detail = ''): void {
    this.state = state;
    this.detail = detail;
    for (const fn of Array.from(this.listeners)) {
      fn();
    }
  }

  /** Open the comm; the state says whether the kernel knows this report. */
  async open(): Promise<void> {
    let comm: ICommLike;
    try {
      comm = this.kernel.createComm(COMM_TARGET);
    } catch (err) {
      this.setState('unavailable', String((err as Error)?.message ?? err));
      return;
    }
    this.comm = comm;
    comm.onMsg = msg => this.onMessage(msg?.content?.data);
    comm.onClose = msg => {
      const data = msg?.content?.data;
      this.comm = null;
      this.fail(typeof data?.message === 'string' ? data.message : 'the kernel closed the explorer channel');
    };
    try {
      await comm.open({ id: this.reportId }).done;
    } catch (err) {
      this.fail(String((err as Error)?.message ?? err));
      return;
    }
    // a kernel without fusionlab's comm target closes the comm at once (before `done`)
    if (this.comm === comm && !comm.isDisposed) {
      this.setState('open');
    }
  }

  private fail(detail: string): void {
    for (const [, p] of this.pending) {
      p.resolve({ ok: false, message: detail });
    }
    this.pending.clear();
    this.setState('unavailable', detail);
  }

  private onMessage(data: any): void {
    if (!data || typeof data !== 'object') {
      return;
    }
    const r = data.request;
    if (typeof r === 'number' && this.pending.has(r)) {
      const p = this.pending.get(r)!;
      this.pending.delete(r);
      p.resolve({ ...data, ok: !!data.ok, message: typeof data.message === 'string' ? data.message : '' });
    }
  }

  /** Send `action` with `fields`; resolves with the kernel's reply (or a failure saying why). */
  request(action: string, fields: Record<string, unknown> = {}): Promise<IReply> {
    const comm = this.comm;
    if (!comm || this.state !== 'open' || comm.isDisposed) {
      return Promise.resolve({ ok: false, message: 'the explorer channel to the kernel is not open' });
    }
    const request = ++this.next;
    return new Promise<IReply>(resolve => {
      this.pending.set(request, { resolve });
      try {
        comm.send({ ...fields, action, request });
      } catch (err) {
        this.pending.delete(request);
        resolve({ ok: false, message: String((err as Error)?.message ?? err) });
      }
    });
  }

  dispose(): void {
    const comm = this.comm;
    this.comm = null;
    if (comm && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // the kernel is gone: nothing to close
      }
    }
    this.kernel.statusChanged?.disconnect(this.onStatus, this);
    this.fail('closed');
    this.listeners.clear();
  }
}

const channels = new Map<string, KernelChannel>();

/**
 * The channel of report `reportId` in `kernel` (opened on first use, shared afterwards;
 * one that failed is opened again only when `retry`).
 */
export function channelFor(kernel: IKernelLike, reportId: string, retry = false): KernelChannel {
  const key = `${kernel.id}\u0000${reportId}`;
  let ch = channels.get(key);
  if (ch && (ch.kernel !== kernel || ch.kernel.isDisposed || (retry && ch.state === 'unavailable'))) {
    ch.dispose();
    ch = undefined;
  }
  if (!ch) {
    ch = new KernelChannel(kernel, reportId);
    channels.set(key, ch);
    void ch.open();
  }
  return ch;
}

/**
 * fusionlab-explorer: a JupyterLab MIME renderer for fusionlab explorer reports
 * (application/vnd.fusionlab.explorer+json). Safe for untrusted notebooks, so it renders
 * saved notebooks with no kernel; preferred over the fallbacks of the same output (a lower
 * rank wins: the kernel's text/html fallback renders at 50, image/svg+xml at 80). With a live
 * kernel it opens the report's channel (kernel.ts, through the plugin in plugin.ts) for the
 * controls that need the kernel; the kernel's updates re-render the same output.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { Explorer, IKernelHost } from './explorer';
import { channelFor, findSession, KernelChannel } from './kernel';
import { MIME_TYPE } from './types';

export { MIME_TYPE };

/** Below the text/html fallback's 50 (docs/explorer-protocol.md: the display bundle). */
export const RANK = 40;

/** One output's explorer. Re-rendered in place when the kernel updates the display. */
export class ExplorerRenderer extends Widget implements IRenderMime.IRenderer, IKernelHost {
  private explorer = new Explorer(this);

  constructor(private options: IRenderMime.IRendererOptions) {
    super();
    this.addClass('fl-renderer');
    this.node.appendChild(this.explorer.node);
  }

  /** The channel of `reportId` in the kernel of the notebook holding this output. */
  channel(reportId: string, retry: boolean): KernelChannel | null {
    const kernel = findSession(this.node)?.session?.kernel;
    return kernel && !kernel.isDisposed ? channelFor(kernel, reportId, retry) : null;
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    let data: unknown = model.data[this.options.mimeType];
    try {
      if (typeof data === 'string') {
        data = JSON.parse(data);
      }
      this.explorer.setReport(data);
    } catch (err) {
      this.explorer.setReport(null);
      console.warn('fusionlab explorer: cannot render this report', err);
    }
    return Promise.resolve();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    // the output is in its notebook now: find the kernel
    this.explorer.connect(false);
  }

  dispose(): void {
    this.explorer.dispose();
    super.dispose();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: RANK,
  createRenderer: options => new ExplorerRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'fusionlab-explorer:renderer',
  rendererFactory,
  rank: RANK,
  dataType: 'json'
};

export default extension;

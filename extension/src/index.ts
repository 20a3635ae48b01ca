/**
 * fusionlab-explorer: a JupyterLab MIME renderer for fusionlab explorer reports
 * (application/vnd.fusionlab.explorer+json). Safe for untrusted notebooks, so it renders
 * saved notebooks with no kernel; preferred over the image/svg+xml fallback of the same
 * output (a lower rank wins; the SVG renderer's is 80).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { Explorer } from './explorer';
import { MIME_TYPE } from './types';

export { MIME_TYPE };

export const RANK = 60;

/** One output's explorer. Re-rendered in place when the kernel updates the display. */
export class ExplorerRenderer extends Widget implements IRenderMime.IRenderer {
  private explorer = new Explorer();

  constructor(private options: IRenderMime.IRendererOptions) {
    super();
    this.addClass('fl-renderer');
    this.node.appendChild(this.explorer.node);
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

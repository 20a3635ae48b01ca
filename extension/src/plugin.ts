/**
 * The regular JupyterLab plugin of the package: it gives the explorer's MIME renderers the
 * application shell, in which a renderer finds the notebook panel holding its output and
 * that panel's kernel (a MIME renderer is given no kernel handle).
 */

import { registerShell } from './kernel';

interface IAppLike {
  shell: { widgets(area?: string): Iterable<any> };
}

const plugin = {
  id: 'fusionlab-explorer:kernel',
  description: 'Connects fusionlab explorer outputs to the kernel of their notebook.',
  autoStart: true,
  activate: (app: IAppLike): void => {
    registerShell(app.shell);
  }
};

export default plugin;

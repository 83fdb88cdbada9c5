// DeepSpeed panel: a left-sidebar widget (Cluster + Runs) and one main-area tab per opened run.
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator, TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import { setLanguage } from './api';
import { ClusterSection } from './cluster';
import { RunsSection } from './runs';
import { RunView } from './runview';

const DOMAIN = 'dscluster';
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
  '<path d="M3 5h18v4H3zM3 10.5h18v4H3zM3 16h18v4H3z" opacity=".35"/><circle cx="6" cy="7" r="1.2"/>' +
  '<circle cx="6" cy="12.5" r="1.2"/><circle cx="6" cy="18" r="1.2"/><path d="M10 6.2h8v1.6h-8zM10 11.7h8v1.6h-8zM10 17.2h8v1.6h-8z"/></g></svg>';
export const deepspeedIcon = new LabIcon({ name: 'dscluster:deepspeed', svgstr: ICON_SVG });

class DeepSpeedPanel extends Widget {
  private cluster: ClusterSection;
  private runs: RunsSection;

  constructor(trans: TranslationBundle, openRun: (id: string) => void) {
    super();
    this.id = 'dscluster-panel';
    this.addClass('dsc-panel');
    this.title.icon = deepspeedIcon;
    this.title.caption = trans.__('DeepSpeed');
    this.cluster = new ClusterSection(trans);
    this.runs = new RunsSection(trans, openRun);
    this.node.append(
      Object.assign(document.createElement('h2'), { className: 'dsc-title', textContent: trans.__('DeepSpeed') }),
      this.cluster.node,
      this.runs.node
    );
  }

  // Poll only while the panel is visible: a hidden sidebar costs the server nothing.
  protected onAfterShow(): void {
    this.cluster.poller.start();
    this.runs.poller.start();
  }

  protected onAfterAttach(): void {
    if (this.isVisible) {
      this.onAfterShow();
    }
  }

  protected onAfterHide(): void {
    this.cluster.poller.stop();
    this.runs.poller.stop();
  }

  protected onBeforeDetach(): void {
    this.onAfterHide();
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'dscluster:panel',
  description: 'DeepSpeed cluster, runs, logs and loss charts.',
  autoStart: true,
  optional: [ITranslator, ILayoutRestorer],
  activate: (app: JupyterFrontEnd, translator: ITranslator | null, restorer: ILayoutRestorer | null) => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    setLanguage((translator ?? nullTranslator).languageCode);
    const views = new Map<string, MainAreaWidget<RunView>>();
    const openRun = (id: string): void => {
      let view = views.get(id);
      if (!view || view.isDisposed) {
        const content = new RunView(id, trans, openRun);
        view = new MainAreaWidget({ content });
        view.id = `dscluster-runview-${id}`;
        view.title.label = `${trans.__('Run')} ${id}`;
        view.title.icon = deepspeedIcon;
        view.title.closable = true;
        views.set(id, view);
        view.disposed.connect(() => views.delete(id));
        app.shell.add(view, 'main');
      }
      app.shell.activateById(view.id);
    };
    const panel = new DeepSpeedPanel(trans, openRun);
    app.shell.add(panel, 'left', { rank: 950 });
    restorer?.add(panel, 'dscluster-panel');
    app.commands.addCommand('dscluster:open-panel', {
      label: trans.__('Open DeepSpeed panel'),
      execute: () => app.shell.activateById(panel.id)
    });
    app.commands.addCommand('dscluster:open-run', {
      label: trans.__('Open DeepSpeed run'),
      execute: args => openRun(String(args.id))
    });
  }
};

export default plugin;

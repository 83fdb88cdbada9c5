// Runs section: the launch form and the run list (status, step, loss; stop; open the run view).
import { TranslationBundle } from '@jupyterlab/translation';
import { api, Claim, el, post, QueueInfo, RequestError, RunSummary } from './api';
import { Poller } from './poller';

export const ACTIVE = new Set(['queued', 'pending', 'running', 'restarting']);

export function statusText(trans: TranslationBundle, status: string): string {
  const names: Record<string, string> = {
    queued: trans.__('queued'),
    pending: trans.__('pending'),
    running: trans.__('running'),
    restarting: trans.__('restarting'),
    succeeded: trans.__('succeeded'),
    failed: trans.__('failed'),
    stopped: trans.__('stopped')
  };
  return names[status] || status;
}

export function statusBadge(trans: TranslationBundle, status: string): HTMLElement {
  return el('span', { class: `dsc-status dsc-status-${status}`, 'data-status': status }, statusText(trans, status));
}

// `panelHints`: what to do in the panel instead of a hint written for the command line, by the setting the
// error names (a 409 for taken GPUs names --wait: the panel has a checkbox for it).
export function errorText(err: unknown, panelHints: Record<string, string> = {}): string {
  if (err instanceof RequestError) {
    const b = err.body;
    const hint = (b.setting && panelHints[b.setting]) || b.hint;
    return hint ? `${b.message} — ${hint}` : b.message;
  }
  return String(err);
}

// The run id's end (time and random suffix: what tells two runs of one name apart) always shows: a long
// id loses its middle to an ellipsis, and the whole id is the label's title.
const ID_TAIL = 12;

export function runIdLabel(id: string): HTMLElement {
  const cut = Math.max(0, id.length - ID_TAIL);
  return el(
    'span',
    { class: 'dsc-run-id', title: id },
    el('span', { class: 'dsc-run-id-head' }, id.slice(0, cut)),
    el('span', { class: 'dsc-run-id-tail' }, id.slice(cut))
  );
}

interface Field {
  key: string;
  label: string;
  input: HTMLInputElement | HTMLTextAreaElement;
}

export class RunsSection {
  readonly node: HTMLElement;
  private list: HTMLElement;
  private queueBox: HTMLElement;
  private waitBox!: HTMLInputElement; // made by buildForm
  private form: HTMLFormElement;
  private formError: HTMLElement;
  private fields: Field[] = [];
  readonly poller: Poller;  // the panel starts it while visible

  constructor(
    private trans: TranslationBundle,
    private openRun: (id: string) => void,
    intervalMs = 2000
  ) {
    this.poller = new Poller(() => this.load(), intervalMs);
    const t = trans;
    const newBtn = el('button', { class: 'jp-Button dsc-btn dsc-new-run', type: 'button' }, t.__('New run'));
    newBtn.onclick = () => this.toggleForm();
    this.formError = el('div', { class: 'dsc-error dsc-form-error', hidden: '' });
    this.form = this.buildForm();
    this.list = el('div', { class: 'dsc-runs' }, el('div', { class: 'dsc-empty' }, t.__('Loading…')));
    this.queueBox = el('div', { class: 'dsc-queue', hidden: '' });
    this.node = el(
      'section',
      { class: 'dsc-section dsc-runs-section' },
      el('h3', {}, t.__('Runs'), ' ', newBtn),
      this.form,
      this.list,
      this.queueBox
    );
  }

  private buildForm(): HTMLFormElement {
    const t = this.trans;
    const mk = (key: string, label: string, multiline = false, type = 'text'): Field => {
      const input = multiline
        ? el('textarea', { name: key, rows: '7', spellcheck: 'false' })
        : el('input', { name: key, type });
      return { key, label, input };
    };
    this.fields = [
      mk('script', t.__('Script')),
      mk('args', t.__('Arguments')),
      mk('config', t.__('DeepSpeed config (JSON or path)'), true),
      mk('cluster', t.__('Cluster (spec or hostfile; empty = default)')),
      mk('nprocs', t.__('Processes on this machine (only without a cluster)'), false, 'number'),
      mk('max_restarts', t.__('Max restarts'), false, 'number'),
      mk('name', t.__('Name (optional)'))
    ];
    const form = el('form', { class: 'dsc-launch-form', hidden: '' });
    for (const f of this.fields) {
      form.append(el('label', { class: 'dsc-field' }, el('span', {}, f.label), f.input));
    }
    this.waitBox = el('input', { name: 'wait', type: 'checkbox', class: 'dsc-wait' });
    form.append(
      el('label', { class: 'dsc-field dsc-check' }, this.waitBox,
        el('span', {}, t.__('Wait in the queue when the GPUs are taken')))
    );
    const launch = el('button', { class: 'jp-Button jp-mod-accept dsc-btn dsc-launch', type: 'submit' }, t.__('Launch'));
    const cancel = el('button', { class: 'jp-Button dsc-btn', type: 'button' }, t.__('Cancel'));
    cancel.onclick = () => this.toggleForm(false);
    form.append(this.formError, el('div', { class: 'dsc-actions' }, launch, cancel));
    form.onsubmit = ev => {
      ev.preventDefault();
      void this.launch(launch);
    };
    return form;
  }

  private async toggleForm(show?: boolean): Promise<void> {
    const visible = show ?? this.form.hidden;
    this.form.hidden = !visible;
    if (visible && !this.form.dataset.loaded) {
      try {
        const d = await api<Record<string, string | number>>('defaults');
        for (const f of this.fields) {
          if (d[f.key] !== undefined && !f.input.value) {
            f.input.value = String(d[f.key]);
          }
        }
        this.form.dataset.loaded = '1';
      } catch (err) {
        this.showError(errorText(err));
      }
    }
  }

  private showError(text: string | null): void {
    this.formError.hidden = !text;
    this.formError.textContent = text || '';
  }

  private async launch(button: HTMLButtonElement): Promise<void> {
    const body: Record<string, string | number | boolean> = { wait: this.waitBox.checked };
    for (const f of this.fields) {
      if (f.key === 'max_restarts') {
        body[f.key] = Number(f.input.value || 0);
      } else if (f.key === 'nprocs') {
        if (f.input.value) {
          body[f.key] = Number(f.input.value);
        }
      } else {
        body[f.key] = f.input.value;
      }
    }
    this.showError(null);
    button.disabled = true;
    try {
      const res = await post<{ id: string }>('runs', body);
      this.form.hidden = true;
      await this.poller.run();
      this.openRun(res.id);
    } catch (err) {
      const t = this.trans;
      const wait = t.__('tick “%1” to queue the run until they are free; the GPU queue below shows who holds them',
        t.__('Wait in the queue when the GPUs are taken'));
      this.showError(errorText(err, { '--wait': wait }));
    } finally {
      button.disabled = false;
    }
  }

  private async load(): Promise<void> {
    try {
      const { runs } = await api<{ runs: RunSummary[] }>('runs');
      this.render(runs);
      this.renderQueue(await api<QueueInfo>('queue'));
    } catch (err) {
      this.list.replaceChildren(el('div', { class: 'dsc-error' }, errorText(err)));
    }
  }

  private render(runs: RunSummary[]): void {
    const t = this.trans;
    if (!runs.length) {
      this.list.replaceChildren(el('div', { class: 'dsc-empty' }, t.__('No runs yet. Start one with “New run”.')));
      return;
    }
    const rows = runs.map(r => {
      const progress =
        r.step != null ? (r.total_steps ? `${r.step}/${r.total_steps}` : `${t.__('step')} ${r.step}`) : '';
      const loss = r.loss != null ? `${t.__('loss')} ${r.loss.toFixed(3)}` : '';
      const row = el(
        'div',
        { class: 'dsc-run-row', 'data-run-id': r.id, tabindex: '0' },
        statusBadge(t, r.status),
        runIdLabel(r.id),
        el('span', { class: 'dsc-meta' }, [progress, loss].filter(Boolean).join(' · ')),
        el('span', { class: 'dsc-owner', title: t.__('owner') }, r.owner || ''),
        el('span', { class: 'dsc-gpus', title: t.__('GPUs held') }, (r.gpus || []).join(' '))
      );
      row.onclick = () => this.openRun(r.id);
      if (ACTIVE.has(r.status) && r.mine !== false) {
        const stop = el('button', { class: 'jp-Button dsc-btn dsc-stop', type: 'button' }, t.__('Stop'));
        stop.onclick = ev => {
          ev.stopPropagation();
          stop.disabled = true;
          post(`runs/${encodeURIComponent(r.id)}/stop`)
            .then(() => this.poller.run())
            .catch(err => window.alert(errorText(err)));
        };
        row.append(stop);
      }
      return row;
    });
    this.list.replaceChildren(...rows);
  }

  // The GPUs runs hold and the runs queued for them (`dscluster queue`).
  private renderQueue(q: QueueInfo): void {
    const t = this.trans;
    const gpus = (c: Claim) => c.gpus.map(g => `${g[0]}:${g[1]}`).join(' ');
    this.queueBox.hidden = !q.held.length && !q.queue.length;
    const held = q.held.map(c =>
      el('div', { class: 'dsc-claim dsc-held', 'data-run-id': c.run_id },
        `${c.run_id} (${c.owner}) ${t.__('holds')} ${gpus(c)}`)
    );
    const waiting = q.queue.map(c =>
      el('div', { class: 'dsc-claim dsc-waiting', 'data-run-id': c.run_id },
        `${c.position}. ${c.run_id} (${c.owner}) ${t.__('waits for')} ${gpus(c)}` +
          (c.behind && c.behind.length ? ` — ${t.__('waiting behind %1', c.behind.join(', '))}` : ''))
    );
    this.queueBox.replaceChildren(el('h4', {}, t.__('GPU queue')), ...held, ...waiting);
  }
}

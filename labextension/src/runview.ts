// Run view (a main-area tab): status, stop/restart, loss and throughput charts, per-rank log tabs,
// events and checkpoints. Everything is fetched incrementally by byte offset, so a long run stays cheap
// and a half-written run directory never breaks the view.
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { api, el, LogFile, post, Since } from './api';
import { LineChart } from './chart';
import { Poller } from './poller';
import { ACTIVE, errorText, statusBadge } from './runs';

interface RunDetail {
  run: Record<string, any>;
  summary: Record<string, any>;
  logs: LogFile[];
}

const MAX_LOG_CHARS = 200000;
// Not a series of their own: the x axis, clocks, DeepSpeed's sample count; loss and throughput have
// fixed charts. Every other number a run logs (dscluster.log, the reference trainer, DeepSpeed's
// monitor: learning rate, loss scale, step timers) gets a chart of its own when it first appears.
const NOT_SERIES = new Set(['step', 'time', 'elapsed_s', 'samples', 'loss', 'tokens_per_s']);
// The order of the charts that follow loss and throughput (then the others as they appear).
const FIRST_SERIES = ['lr', 'val_loss', 'elapsed_time_ms_step', 'loss_scale'];

export class RunView extends Widget {
  private statusBox = el('span', { class: 'dsc-run-status' });
  private info = el('div', { class: 'dsc-meta dsc-run-info' });
  private explanation = el('div', { class: 'dsc-explanation', hidden: '' });
  private message = el('div', { class: 'dsc-error', hidden: '' });
  private loss: LineChart;
  private speed: LineChart;
  private charts = el('div', { class: 'dsc-charts' });
  private series: Map<string, LineChart> = new Map();
  private logTabs = el('div', { class: 'dsc-tabs dsc-log-tabs' });
  private logPre = el('pre', { class: 'dsc-log' });
  private eventsList = el('ul', { class: 'dsc-events' });
  private ckptBody = el('tbody', {});
  private stopBtn: HTMLButtonElement;
  private restartBtn: HTMLButtonElement;
  private metricsOffset = 0;
  private eventsOffset = 0;
  private logs: Map<string, { offset: number | null; text: string }> = new Map();
  private activeLog: string | null = null;
  private poller: Poller;
  private forceNext = false;
  private ticks = 0;
  private status = 'pending';

  constructor(
    readonly runId: string,
    private trans: TranslationBundle,
    private openRun: (id: string) => void,
    intervalMs = 1500
  ) {
    super();
    this.poller = new Poller(() => this.poll(), intervalMs);
    const t = trans;
    this.id = `dscluster-run-${runId}`;
    this.addClass('dsc-runview');
    this.title.label = runId;
    this.title.caption = runId;  // the whole id on hover, where the tab cuts it short
    this.title.closable = true;
    this.loss = new LineChart(t.__('Loss'), t.__('no data yet'), 'loss', t.__('step'));
    this.speed = new LineChart(t.__('Throughput (tokens/s)'), t.__('no data yet'), 'throughput', t.__('step'));
    this.charts.append(this.loss.node, this.speed.node);
    this.stopBtn = el('button', { class: 'jp-Button dsc-btn dsc-stop', type: 'button' }, t.__('Stop'));
    this.restartBtn = el('button', { class: 'jp-Button dsc-btn dsc-restart', type: 'button' }, t.__('Restart'));
    this.stopBtn.onclick = () => void this.act('stop');
    this.restartBtn.onclick = () => void this.act('restart');
    const table = el(
      'table',
      { class: 'dsc-ckpts' },
      el('thead', {}, el('tr', {}, el('th', {}, t.__('Checkpoint')), el('th', {}, t.__('Committed')), el('th', {}, ''))),
      this.ckptBody
    );
    this.node.append(
      el(
        'div',
        { class: 'dsc-run-head' },
        el('h2', {}, runId),
        this.statusBox,
        this.stopBtn,
        this.restartBtn
      ),
      this.info,
      this.explanation,
      this.message,
      this.charts,
      el('h3', {}, t.__('Logs')),
      this.logTabs,
      this.logPre,
      el('div', { class: 'dsc-columns' },
        el('div', {}, el('h3', {}, t.__('Events')), this.eventsList),
        el('div', {}, el('h3', {}, t.__('Checkpoints')), table))
    );
  }

  protected onAfterAttach(): void {
    this.poller.start();
  }

  dispose(): void {
    this.poller.stop();
    for (const chart of [this.loss, this.speed, ...this.series.values()]) {
      chart.dispose();
    }
    super.dispose();
  }

  private async act(action: 'stop' | 'restart'): Promise<void> {
    this.message.hidden = true;
    const btn = action === 'stop' ? this.stopBtn : this.restartBtn;
    btn.disabled = true;
    try {
      const res = await post<{ id: string }>(`runs/${encodeURIComponent(this.runId)}/${action}`);
      if (action === 'restart' && res.id) {
        this.openRun(res.id);
      }
      this.forceNext = true;  // a tick still in flight leaves it for the next one
      await this.poller.run();
    } catch (err) {
      this.message.hidden = false;
      const wait = this.trans.__('restart when they are free, or stop the run that holds them; the GPU queue in the DeepSpeed panel shows who holds them');
      this.message.textContent = errorText(err, { '--wait': wait });
    } finally {
      btn.disabled = false;
    }
  }

  private async poll(): Promise<void> {
    const force = this.forceNext;
    this.forceNext = false;
    // Finished runs change no more: poll them rarely.
    if (!force && !ACTIVE.has(this.status) && this.ticks > 2 && this.ticks++ % 10 !== 0) {
      return;
    }
    this.ticks++;
    const base = `runs/${encodeURIComponent(this.runId)}`;
    try {
      const detail = await api<RunDetail>(base);
      this.renderDetail(detail);
      // The first load of a long run is thinned to ~4000 points; later polls bring every new line.
      const metrics = await api<Since<Record<string, any>>>(`${base}/metrics?offset=${this.metricsOffset}&max=4000`);
      this.metricsOffset = metrics.offset;
      this.addMetrics(metrics.records);
      const events = await api<Since<Record<string, any>>>(`${base}/events?offset=${this.eventsOffset}`);
      this.eventsOffset = events.offset;
      this.addEvents(events.records);
      await this.pollLog(base);
      if (force || this.ticks % 4 === 1 || !ACTIVE.has(this.status)) {
        const ck = await api<{ checkpoints: any[] }>(`${base}/checkpoints`);
        this.renderCheckpoints(ck.checkpoints);
      }
      this.message.hidden = true;
    } catch (err) {
      this.message.hidden = false;
      this.message.textContent = errorText(err);
    }
  }

  private renderDetail(d: RunDetail): void {
    const t = this.trans;
    this.status = String(d.run.status || 'pending');
    this.statusBox.replaceChildren(statusBadge(t, this.status));
    const mine = d.summary?.mine !== false; // only its owner (or root) may stop or restart it
    this.stopBtn.hidden = !ACTIVE.has(this.status) || !mine;
    this.restartBtn.hidden = ACTIVE.has(this.status) || !mine;
    const attempts = (d.run.attempts || []).length;
    const parts = [
      d.run.cluster ? `${t.__('cluster')}: ${typeof d.run.cluster === 'string' ? d.run.cluster : JSON.stringify(d.run.cluster)}` : '',
      d.run.world_size ? `${t.__('world size')}: ${d.run.world_size}` : '',
      attempts ? `${t.__('attempts')}: ${attempts}` : '',
      d.run.exit_code != null ? `${t.__('exit code')}: ${d.run.exit_code}` : '',
      d.run.created ? `${t.__('created')}: ${d.run.created}` : '',
      d.summary?.owner ? `${t.__('owner')}: ${d.summary.owner}` : ''
    ];
    this.info.textContent = parts.filter(Boolean).join(' · ');
    const ex = d.run.explanation;
    this.explanation.hidden = !ex;
    if (ex) {
      // The first failing rank's own words first (type, message, file:line, rank and node), then the cause
      // and the fix, then why no restart was tried where one was left.
      const first: (string | HTMLElement)[] = ex.error_line
        ? [el('strong', {}, t.__('First error')), ' ', el('code', { class: 'dsc-first-error' }, String(ex.error_line)), el('br', {})]
        : [];
      const note: (string | HTMLElement)[] = ex.no_restart_note
        ? [el('br', {}), el('em', { class: 'dsc-no-restart' }, String(ex.no_restart_note))]
        : [];
      this.explanation.replaceChildren(
        ...first,
        el('strong', {}, t.__('What happened')), ' ', String(ex.cause || ex.signature || ''),
        el('br', {}), el('strong', {}, t.__('Fix')), ' ', String(ex.fix || ''),
        ...note
      );
    }
    for (const f of d.logs) {
      if (!this.logs.has(f.name)) {
        this.logs.set(f.name, { offset: null, text: '' });
        const rank = /rank(\d+)/.exec(f.name);
        const label = rank ? `rank ${rank[1]}` : f.name.replace(/\.log$/, '');
        const tab = el('button', { class: 'dsc-tab', type: 'button', 'data-log': f.name, title: f.name }, label);
        tab.onclick = () => this.selectLog(f.name);
        this.logTabs.append(tab);
      }
    }
    // Keep tabs in the server's order (launcher, ranks by number, then supervisor, watchdog) as files appear.
    const tabs = new Map(
      (Array.from(this.logTabs.children) as HTMLElement[]).map(t => [t.dataset.log || '', t] as [string, HTMLElement])
    );
    for (const f of d.logs) {
      const tab = tabs.get(f.name);
      if (tab) {
        this.logTabs.append(tab);
      }
    }
    // Until the user picks a tab, show the most useful log: rank 0, else the launcher's.
    if (!this.userPicked && d.logs.length) {
      const best =
        d.logs.find(f => /rank0(?!\d)/.test(f.name)) ||
        d.logs.find(f => /rank/.test(f.name)) ||
        d.logs.find(f => f.name.startsWith('launcher')) ||
        d.logs[0];
      if (best.name !== this.activeLog) {
        this.selectLog(best.name, false);
      }
    }
  }

  private userPicked = false;

  private selectLog(name: string, byUser = true): void {
    this.userPicked = this.userPicked || byUser;
    this.activeLog = name;
    for (const tab of Array.from(this.logTabs.children) as HTMLElement[]) {
      tab.classList.toggle('dsc-tab-active', tab.dataset.log === name);
    }
    this.logPre.textContent = this.logs.get(name)?.text || '';
    if (byUser) {
      void this.pollLog(`runs/${encodeURIComponent(this.runId)}`);
    }
  }

  private async pollLog(base: string): Promise<void> {
    const name = this.activeLog;
    if (!name) {
      return;
    }
    const state = this.logs.get(name)!;
    const q = state.offset === null ? '' : `?offset=${state.offset}`;
    const res = await api<{ text: string; offset: number; skipped: boolean }>(
      `${base}/logs/${encodeURIComponent(name)}${q}`
    );
    state.offset = res.offset;
    if (res.text) {
      state.text = (res.skipped ? '…\n' : state.text) + res.text;
      if (state.text.length > MAX_LOG_CHARS) {
        state.text = state.text.slice(-MAX_LOG_CHARS);
      }
      if (this.activeLog === name) {
        const atBottom = this.logPre.scrollTop + this.logPre.clientHeight >= this.logPre.scrollHeight - 4;
        this.logPre.textContent = state.text;
        if (atBottom) {
          this.logPre.scrollTop = this.logPre.scrollHeight;
        }
      }
    }
  }

  private addMetrics(records: Record<string, any>[]): void {
    const loss: [number, number][] = [];
    const speed: [number, number][] = [];
    const other: Map<string, [number, number][]> = new Map();
    for (const r of records) {
      if (typeof r.step !== 'number') {
        continue;
      }
      if (typeof r.loss === 'number') {
        loss.push([r.step, r.loss]);
      }
      if (typeof r.tokens_per_s === 'number') {
        speed.push([r.step, r.tokens_per_s]);
      }
      if (r.event !== undefined) {
        continue;  // the trainer's closing line repeats values already charted
      }
      for (const [key, value] of Object.entries(r)) {
        if (typeof value === 'number' && !NOT_SERIES.has(key)) {
          if (!other.has(key)) {
            other.set(key, []);
          }
          other.get(key)!.push([r.step, value]);
        }
      }
    }
    if (loss.length) {
      this.loss.add(loss);
    }
    if (speed.length) {
      this.speed.add(speed);
    }
    const rank = (k: string) => (FIRST_SERIES.includes(k) ? FIRST_SERIES.indexOf(k) : FIRST_SERIES.length);
    for (const key of [...other.keys()].sort((a, b) => rank(a) - rank(b))) {
      let chart = this.series.get(key);
      if (!chart) {
        chart = new LineChart(this.seriesTitle(key), this.trans.__('no data yet'), key, this.trans.__('step'));
        this.series.set(key, chart);
        this.charts.append(chart.node);
      }
      chart.add(other.get(key)!);
    }
  }

  private seriesTitle(key: string): string {
    const t = this.trans;
    switch (key) {
      case 'lr':
        return t.__('Learning rate');
      case 'val_loss':
        return t.__('Validation loss');
      case 'loss_scale':
        return t.__('Loss scale');
      case 'elapsed_time_ms_step':
        return t.__('Step time (ms)');
      case 'elapsed_time_ms_forward':
        return t.__('Forward time (ms)');
      case 'elapsed_time_ms_backward':
        return t.__('Backward time (ms)');
      case 'elapsed_time_ms_backward_inner':
        return t.__('Backward inner time (ms)');
      case 'elapsed_time_ms_backward_allreduce':
        return t.__('Gradient all-reduce time (ms)');
      default:
        return key;  // the name the script logged it under
    }
  }

  private addEvents(records: Record<string, any>[]): void {
    for (const e of records) {
      const time = typeof e.time === 'number' ? new Date(e.time * 1000).toLocaleTimeString() : String(e.time ?? '');
      const rest = Object.entries(e)
        .filter(([k]) => k !== 'time' && k !== 'event')
        .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
        .join(' ');
      this.eventsList.append(
        el('li', { 'data-event': String(e.event) }, el('span', { class: 'dsc-meta' }, time), ' ', el('strong', {}, String(e.event)), ' ', rest)
      );
    }
  }

  private renderCheckpoints(list: any[]): void {
    const t = this.trans;
    if (!list.length) {
      this.ckptBody.replaceChildren(el('tr', {}, el('td', { colspan: '3', class: 'dsc-meta' }, t.__('none yet'))));
      return;
    }
    this.ckptBody.replaceChildren(
      ...list.map(c =>
        el(
          'tr',
          { 'data-step': String(c.step) },
          el('td', {}, c.tag),
          // A committed step whose files no longer match its COMMIT.json: named as `dscluster ckpt` names it.
          c.damage
            ? el('td', { class: 'dsc-damaged', title: c.damage }, '✗ ' + t.__('damaged: %1', c.damage))
            : el('td', {}, c.committed ? '✓' : t.__('incomplete')),
          el('td', {}, c.latest ? t.__('latest') : '')
        )
      )
    );
  }
}

// GPU history: per node, per GPU, four small time series (utilisation, memory, power, temperature) of the
// samples the node agent keeps in <shared>/nodes/<node>.history.jsonl (the server's own node: kept in the
// server's memory). The multi-node view that single-machine GPU dashboards lack: one row per GPU of every node.
import { TranslationBundle } from '@jupyterlab/translation';
import uPlot from 'uplot';
import { el } from './api';

const H = 28;

export interface GpuSeries {
  index: number;
  name?: string | null;
  util: (number | null)[];
  mem_used: (number | null)[];
  mem_total: (number | null)[];
  power_w: (number | null)[];
  temp_c: (number | null)[];
}

export interface GpuHistory {
  time: number[];
  gpus: GpuSeries[];
}

interface Metric {
  key: string;
  label: string;
  values: (number | null)[];
  max: number;
  unit: string;
  color: string;
}

// A small uPlot chart of one metric of one GPU, drawn from 0 to the metric's top. Hovering it shows the value
// and the time of the sample under the cursor in its label (the newest sample otherwise). The cluster section
// redraws its cards every few seconds: each spark is kept, by node, GPU and metric, and only given new data,
// so the hover survives the redraw.
class Spark {
  readonly node: HTMLDivElement;
  readonly label: HTMLSpanElement;
  private plot: uPlot | null = null;
  private times: number[] = [];
  private m: Metric | null = null;

  constructor(key: string) {
    this.node = document.createElement('div');
    this.node.className = `dsc-spark dsc-spark-${key}`;
    this.label = document.createElement('span');
    this.label.className = 'dsc-spark-label';
    new ResizeObserver(() => this.fit()).observe(this.node);
  }

  update(m: Metric, times: number[]): void {
    this.m = m;
    this.times = times;
    this.node.dataset.points = String(m.values.filter(v => v !== null && v !== undefined && isFinite(v)).length);
    this.node.dataset.max = String(m.max);
    if (this.plot) {
      this.plot.setData([times, m.values]);
    } else {
      this.fit();
    }
    this.showLabel(this.plot?.cursor.idx ?? null);
  }

  private fit(): void {
    const width = Math.floor(this.node.clientWidth);
    if (width <= 0 || !this.m) {
      return;
    }
    if (!this.plot) {
      const opts: uPlot.Options = {
        width,
        height: H,
        legend: { show: false },
        axes: [{ show: false }, { show: false }],
        select: { show: false, left: 0, top: 0, width: 0, height: 0 },
        cursor: { drag: { x: false, y: false }, y: false, points: { size: 5 } },
        padding: [2, 0, 1, 0],
        scales: { x: { time: false }, y: { range: () => [0, this.m?.max || 1] } },
        series: [{}, { stroke: this.m.color, width: 1.2, points: { show: false } }],
        hooks: { setCursor: [u => this.showLabel(u.cursor.idx ?? null)] }
      };
      this.plot = new uPlot(opts, [this.times, this.m.values], this.node);
    } else if (width !== this.plot.width) {
      this.plot.setSize({ width, height: H });
    }
  }

  /** The sample under the cursor (`idx`) with its time, else the newest. */
  private showLabel(idx: number | null): void {
    const m = this.m;
    if (!m) {
      return;
    }
    const i = idx === null ? lastIndex(m.values) : idx;
    const v = i < 0 ? null : m.values[i];
    const shown = v === null || v === undefined ? '–' : v.toFixed(m.key === 'mem' ? 1 : 0);
    const clock: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false };
    const when = idx === null || i < 0 ? '' : ` · ${new Date(this.times[i] * 1000).toLocaleTimeString([], clock)}`;
    this.label.dataset.hover = idx === null ? 'no' : 'yes';
    this.label.textContent = `${m.label} ${shown}${m.unit}${when}`;
    this.label.title = this.label.textContent;
  }
}

const sparks = new Map<string, Spark>();

function spark(id: string, key: string): Spark {
  let s = sparks.get(id);
  if (!s) {
    s = new Spark(key);
    sparks.set(id, s);
  }
  return s;
}

function lastIndex(values: (number | null)[]): number {
  for (let i = values.length - 1; i >= 0; i--) {
    if (values[i] !== null && values[i] !== undefined) {
      return i;
    }
  }
  return -1;
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

function last(values: (number | null)[]): number | null {
  const i = lastIndex(values);
  return i < 0 ? null : values[i];
}

function peak(values: (number | null)[]): number {
  return values.reduce<number>((a, v) => (v !== null && v !== undefined && v > a ? v : a), 0);
}

export function gpuHistory(
  history: GpuHistory | undefined,
  trans: TranslationBundle,
  nodeName: string
): HTMLElement | null {
  if (!history || history.time.length < 2 || !history.gpus.length) {
    return null;
  }
  const times = history.time;
  const minutes = Math.max(1, Math.round((times[times.length - 1] - times[0]) / 60));
  const box = el(
    'div',
    { class: 'dsc-gpu-history' },
    el('div', { class: 'dsc-meta' }, trans.__('last %1 min', minutes))
  );
  for (const g of history.gpus) {
    const memGiB = g.mem_used.map(v => (v === null ? null : v / 2 ** 30));
    const totalGiB = (last(g.mem_total) || peak(g.mem_used) || 1) / 2 ** 30;
    const metrics: Metric[] = [
      { key: 'util', label: trans.__('util'), values: g.util, max: 100, unit: '%',
        color: cssVar('--jp-brand-color1', '#1976d2') },
      { key: 'mem', label: trans.__('memory'), values: memGiB, max: totalGiB, unit: ' GiB',
        color: cssVar('--jp-success-color1', '#388e3c') },
      { key: 'power', label: trans.__('power'), values: g.power_w, max: Math.max(100, peak(g.power_w)), unit: ' W',
        color: cssVar('--jp-warn-color1', '#f57c00') },
      { key: 'temp', label: trans.__('temperature'), values: g.temp_c, max: Math.max(90, peak(g.temp_c)), unit: ' °C',
        color: cssVar('--jp-error-color1', '#d32f2f') }
    ];
    const row = el(
      'div',
      { class: 'dsc-gpu-history-row', 'data-gpu': String(g.index) },
      el('span', { class: 'dsc-gpu-name', title: g.name || '' }, `GPU${g.index}`)
    );
    for (const m of metrics) {
      const s = spark(`${nodeName}/${g.index}/${m.key}`, m.key);
      s.update(m, times);
      row.append(el('div', { class: 'dsc-spark-cell', 'data-metric': m.key, title: m.label }, s.node, s.label));
    }
    box.append(row);
  }
  return box;
}

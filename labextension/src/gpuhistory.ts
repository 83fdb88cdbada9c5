// GPU history: per node, per GPU, four small time series (utilisation, memory, power, temperature) of the
// samples the node agent keeps in <shared>/nodes/<node>.history.jsonl (the server's own node: kept in the
// server's memory). The multi-node view that single-machine GPU dashboards lack: one row per GPU of every node.
import { TranslationBundle } from '@jupyterlab/translation';
import { el } from './api';

const SVG = 'http://www.w3.org/2000/svg';
const W = 120;
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
}

function sparkline(m: Metric, times: number[]): SVGSVGElement {
  const node = document.createElementNS(SVG, 'svg');
  node.setAttribute('viewBox', `0 0 ${W} ${H}`);
  node.setAttribute('class', `dsc-spark dsc-spark-${m.key}`);
  const t0 = times[0];
  const span = Math.max(1e-9, times[times.length - 1] - t0);
  const pts: string[] = [];
  m.values.forEach((v, i) => {
    if (v === null || v === undefined || !isFinite(v)) {
      return;
    }
    const x = ((times[i] - t0) / span) * W;
    const y = H - 1 - (Math.max(0, Math.min(m.max, v)) / m.max) * (H - 2);
    pts.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  });
  const line = document.createElementNS(SVG, 'polyline');
  line.setAttribute('points', pts.join(' '));
  line.setAttribute('fill', 'none');
  node.append(line);
  node.dataset.points = String(pts.length);
  return node;
}

function last(values: (number | null)[]): number | null {
  for (let i = values.length - 1; i >= 0; i--) {
    if (values[i] !== null && values[i] !== undefined) {
      return values[i];
    }
  }
  return null;
}

function peak(values: (number | null)[]): number {
  return values.reduce<number>((a, v) => (v !== null && v !== undefined && v > a ? v : a), 0);
}

export function gpuHistory(history: GpuHistory | undefined, trans: TranslationBundle): HTMLElement | null {
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
      { key: 'util', label: trans.__('util'), values: g.util, max: 100, unit: '%' },
      { key: 'mem', label: trans.__('memory'), values: memGiB, max: totalGiB, unit: ' GiB' },
      { key: 'power', label: trans.__('power'), values: g.power_w, max: Math.max(100, peak(g.power_w)), unit: ' W' },
      { key: 'temp', label: trans.__('temperature'), values: g.temp_c, max: Math.max(90, peak(g.temp_c)), unit: ' °C' }
    ];
    const row = el(
      'div',
      { class: 'dsc-gpu-history-row', 'data-gpu': String(g.index) },
      el('span', { class: 'dsc-gpu-name', title: g.name || '' }, `GPU${g.index}`)
    );
    for (const m of metrics) {
      const v = last(m.values);
      row.append(
        el(
          'div',
          { class: 'dsc-spark-cell', 'data-metric': m.key, title: m.label },
          sparkline(m, times),
          el('span', { class: 'dsc-spark-label' }, `${m.label} ${v === null ? '–' : v.toFixed(m.key === 'mem' ? 1 : 0)}${m.unit}`)
        )
      );
    }
    box.append(row);
  }
  return box;
}

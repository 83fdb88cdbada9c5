// Cluster section: every node of the resolved cluster with its GPUs (or CPU/memory), polled live.
import { TranslationBundle } from '@jupyterlab/translation';
import { api, ClusterInfo, el, fmtBytes, NodeInfo, RequestError } from './api';
import { gpuHistory } from './gpuhistory';
import { Poller } from './poller';

function bar(percent: number | null | undefined, label: string): HTMLElement {
  const p = percent === null || percent === undefined ? 0 : Math.max(0, Math.min(100, percent));
  const fill = el('div', { class: 'dsc-bar-fill' });
  fill.style.width = `${p}%`;
  if (p > 90) {
    fill.classList.add('dsc-bar-hot');
  }
  return el('div', { class: 'dsc-bar', title: label }, fill, el('span', { class: 'dsc-bar-label' }, label));
}

export class ClusterSection {
  readonly node: HTMLElement;
  private body: HTMLElement;
  private meta: HTMLElement;
  readonly poller: Poller;  // the panel starts it while visible

  constructor(
    private trans: TranslationBundle,
    intervalMs = 3000
  ) {
    this.poller = new Poller(() => this.load(), intervalMs);
    this.meta = el('span', { class: 'dsc-meta' });
    this.body = el('div', { class: 'dsc-nodes' }, el('div', { class: 'dsc-empty' }, trans.__('Loading…')));
    this.node = el(
      'section',
      { class: 'dsc-section dsc-cluster' },
      el('h3', {}, trans.__('Cluster'), ' ', this.meta),
      this.body
    );
  }

  private async load(): Promise<void> {
    try {
      const info = await api<ClusterInfo>('cluster');
      this.render(info);
    } catch (err) {
      const msg = err instanceof RequestError ? err.body.message : String(err);
      this.body.replaceChildren(el('div', { class: 'dsc-error' }, msg));
    }
  }

  private render(info: ClusterInfo): void {
    const t = this.trans;
    this.meta.textContent =
      info.source === 'local'
        ? t.__('this machine')
        : t.__('%1 · %2 nodes', info.name, info.nodes.length);
    const children: HTMLElement[] = [];
    if (info.error) {
      children.push(el('div', { class: 'dsc-error' }, info.error.message, info.error.hint ? ` — ${info.error.hint}` : ''));
    }
    for (const node of info.nodes) {
      children.push(this.renderNode(node));
    }
    this.body.replaceChildren(...children);
  }

  private renderNode(node: NodeInfo): HTMLElement {
    const t = this.trans;
    const head = el(
      'div',
      { class: 'dsc-node-head' },
      el('span', { class: 'dsc-node-name' }, node.name),
      el('span', { class: 'dsc-meta' }, node.address),
      node.local ? el('span', { class: 'dsc-badge' }, t.__('this node')) : ''
    );
    const card = el('div', { class: 'dsc-node', 'data-node': node.name }, head);
    const s = node.sample;
    if (!s) {
      card.append(el('div', { class: 'dsc-meta' }, t.__('no sample yet: the node agent is not publishing')));
      return card;
    }
    if (s.stale) {
      card.classList.add('dsc-stale');
      card.append(el('div', { class: 'dsc-warn' }, t.__('last sample %1 s old', Math.round(s.age_s || 0))));
    }
    const gpus = s.gpus || [];
    if (gpus.length) {
      for (const g of gpus) {
        const memPct = g.mem_total ? (100 * (g.mem_used || 0)) / g.mem_total : null;
        card.append(
          el(
            'div',
            { class: 'dsc-gpu', 'data-gpu': String(g.index) },
            el('span', { class: 'dsc-gpu-name', title: g.name || '' }, `GPU${g.index}`),
            bar(g.util, t.__('util %1%', g.util ?? '–')),
            bar(memPct, `${fmtBytes(g.mem_used)} / ${fmtBytes(g.mem_total)}`),
            el('span', { class: 'dsc-meta' }, `${g.power_w != null ? g.power_w.toFixed(0) : '–'} W`),
            el('span', { class: 'dsc-meta' }, `${g.temp_c ?? '–'} °C`)
          )
        );
      }
      const charts = gpuHistory(node.history, t, node.name);
      if (charts) {
        card.append(charts);
      }
    } else {
      const mem = s.memory || {};
      const memPct = mem.total ? (100 * (mem.used || 0)) / mem.total : null;
      card.append(
        el(
          'div',
          { class: 'dsc-gpu dsc-cpu' },
          el('span', { class: 'dsc-gpu-name' }, t.__('CPU')),
          bar(s.cpu?.percent, t.__('%1% of %2 cores', s.cpu?.percent ?? '–', s.cpu?.count ?? '?'))
        ),
        el(
          'div',
          { class: 'dsc-gpu dsc-cpu' },
          el('span', { class: 'dsc-gpu-name' }, t.__('RAM')),
          bar(memPct, `${fmtBytes(mem.used)} / ${fmtBytes(mem.total)}`)
        )
      );
      card.append(el('div', { class: 'dsc-meta' }, t.__('no GPUs (NVML not available)')));
    }
    return card;
  }
}

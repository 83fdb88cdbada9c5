// A dependency-free SVG line chart: enough for loss and throughput curves that update live.
const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    node.setAttribute(k, String(v));
  }
  return node;
}

function fmt(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) {
    return (v / 1e6).toFixed(1) + 'M';
  }
  if (a >= 1e4) {
    return (v / 1e3).toFixed(0) + 'k';
  }
  if (a >= 100) {
    return v.toFixed(0);
  }
  return v.toPrecision(3);
}

export class LineChart {
  readonly node: HTMLDivElement;
  private points: [number, number][] = [];
  private svgNode: SVGSVGElement;

  constructor(
    public title: string,
    private emptyText: string,
    kind: string
  ) {
    this.node = document.createElement('div');
    this.node.className = 'dsc-chart';
    this.node.dataset.kind = kind;
    const heading = document.createElement('div');
    heading.className = 'dsc-chart-title';
    heading.textContent = title;
    this.node.append(heading);
    this.svgNode = svg('svg', {
      viewBox: '0 0 400 160',
      preserveAspectRatio: 'none',
      class: 'dsc-chart-svg'
    });
    this.node.append(this.svgNode);
    this.render();
  }

  add(points: [number, number][]): void {
    for (const p of points) {
      if (Number.isFinite(p[0]) && Number.isFinite(p[1])) {
        this.points.push(p);
      }
    }
    this.render();
  }

  get count(): number {
    return this.points.length;
  }

  private render(): void {
    const s = this.svgNode;
    while (s.firstChild) {
      s.removeChild(s.firstChild);
    }
    this.node.dataset.points = String(this.points.length);
    const W = 400;
    const H = 160;
    const L = 44;
    const B = 18;
    const T = 6;
    const R = 6;
    s.append(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'dsc-chart-frame' }));
    if (this.points.length === 0) {
      const t = svg('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'dsc-chart-empty' });
      t.textContent = this.emptyText;
      s.append(t);
      return;
    }
    const xs = this.points.map(p => p[0]);
    const ys = this.points.map(p => p[1]);
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (x1 === x0) {
      x1 = x0 + 1;
    }
    if (y1 === y0) {
      y0 -= 0.5;
      y1 += 0.5;
    }
    const px = (x: number) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const py = (y: number) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
    for (const [y, anchor] of [
      [y1, T + 8],
      [y0, H - B]
    ]) {
      const t = svg('text', { x: L - 4, y: anchor, 'text-anchor': 'end', class: 'dsc-chart-axis' });
      t.textContent = fmt(y);
      s.append(t);
    }
    for (const [x, anchor, align] of [
      [x0, L, 'start'],
      [x1, W - R, 'end']
    ] as [number, number, string][]) {
      const t = svg('text', { x: anchor, y: H - 4, 'text-anchor': align, class: 'dsc-chart-axis' });
      t.textContent = fmt(x);
      s.append(t);
    }
    const d = this.points.map(p => `${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join(' ');
    s.append(svg('polyline', { points: d, class: 'dsc-chart-line', fill: 'none' }));
    const last = this.points[this.points.length - 1];
    s.append(svg('circle', { cx: px(last[0]), cy: py(last[1]), r: 2.5, class: 'dsc-chart-dot' }));
  }
}

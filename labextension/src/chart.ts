// A line chart of one series against the step (loss, throughput, learning rate, ...), drawn by uPlot: a
// small canvas charting library made for live time series. Hovering shows the step and the value under the
// cursor in the readout above the plot (the newest point when not hovering); a constant series gets an
// axis around its value, not one around zero.
import uPlot from 'uplot';

const HEIGHT = 170;

/** A tick label: short (12k, 1.2M, 3e-4), as wide as the axis allows. */
export function fmtTick(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) {
    return +(v / 1e6).toPrecision(3) + 'M';
  }
  if (a >= 1e4) {
    return +(v / 1e3).toPrecision(3) + 'k';
  }
  if (a !== 0 && a < 1e-3) {
    return v.toExponential(1).replace(/\.0e/, 'e');
  }
  return String(+v.toPrecision(3));
}

/** A value in the readout: enough digits to tell neighbouring steps apart. */
export function fmtValue(v: number): string {
  const a = Math.abs(v);
  if (Number.isInteger(v) || a >= 1000) {
    return Math.round(v).toLocaleString('en-US');
  }
  if (a !== 0 && a < 1e-3) {
    return v.toExponential(4).replace(/\.?0+e/, 'e');
  }
  return String(+v.toPrecision(5));
}

/** The y range: a constant series sits in the middle of an axis around its value (a tenth of it either
 * side), zero on [0, 1]; any other series gets uPlot's padded, rounded range. */
export function yRange(min: number | null, max: number | null): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) {
    return [0, 1];
  }
  if (min === max) {
    if (min === 0) {
      return [0, 1];
    }
    const pad = Math.abs(min) * 0.1;
    return [min - pad, max + pad];
  }
  const r = uPlot.rangeNum(min, max, 0.1, true);
  return [r[0] ?? min, r[1] ?? max];
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

export class LineChart {
  readonly node: HTMLDivElement;
  private xs: number[] = [];
  private ys: number[] = [];
  private plot: uPlot | null = null;
  private box: HTMLDivElement;
  private readout: HTMLSpanElement;
  private empty: HTMLDivElement;
  private resizer: ResizeObserver;

  constructor(
    public title: string,
    private emptyText: string,
    kind: string,
    private stepLabel = 'step'
  ) {
    this.node = document.createElement('div');
    this.node.className = 'dsc-chart';
    this.node.dataset.kind = kind;
    this.node.dataset.points = '0';
    const head = document.createElement('div');
    head.className = 'dsc-chart-head';
    const heading = document.createElement('span');
    heading.className = 'dsc-chart-title';
    heading.textContent = title;
    this.readout = document.createElement('span');
    this.readout.className = 'dsc-chart-readout';
    head.append(heading, this.readout);
    this.box = document.createElement('div');
    this.box.className = 'dsc-chart-plot';
    this.empty = document.createElement('div');
    this.empty.className = 'dsc-chart-empty';
    this.empty.textContent = this.emptyText;
    this.box.append(this.empty);
    this.node.append(head, this.box);
    // uPlot draws at a fixed size: follow the width the layout gives the chart (none while hidden).
    this.resizer = new ResizeObserver(() => this.fit());
    this.resizer.observe(this.box);
  }

  add(points: [number, number][]): void {
    let added = 0;
    for (const [x, y] of points) {
      if (Number.isFinite(x) && Number.isFinite(y)) {
        this.xs.push(x);
        this.ys.push(y);
        added++;
      }
    }
    if (!added) {
      return;
    }
    this.node.dataset.points = String(this.xs.length);
    this.empty.hidden = true;
    if (this.plot) {
      this.plot.setData([this.xs, this.ys]);
    } else {
      this.fit();
    }
    this.showReadout(null);
  }

  get count(): number {
    return this.xs.length;
  }

  dispose(): void {
    this.resizer.disconnect();
    this.plot?.destroy();
    this.plot = null;
  }

  private fit(): void {
    const width = Math.floor(this.box.clientWidth);
    if (width <= 0 || !this.xs.length) {
      return;
    }
    if (!this.plot) {
      this.plot = new uPlot(this.options(width), [this.xs, this.ys], this.box);
    } else if (width !== this.plot.width) {
      this.plot.setSize({ width, height: HEIGHT });
    }
  }

  private options(width: number): uPlot.Options {
    const text = cssVar('--jp-ui-font-color2', '#616161');
    const line = cssVar('--jp-brand-color1', '#1976d2');
    const grid = { stroke: cssVar('--jp-border-color3', '#eeeeee'), width: 1 };
    const axis = { stroke: text, grid, ticks: { stroke: grid.stroke, width: 1 }, font: '10px sans-serif' };
    return {
      width,
      height: HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      scales: { x: { time: false }, y: { range: (_u, min, max) => yRange(min, max) } },
      axes: [
        { ...axis, size: 28, values: (_u, splits) => splits.map(fmtTick) },
        { ...axis, size: 52, values: (_u, splits) => splits.map(fmtTick) }
      ],
      series: [{ label: this.stepLabel }, { label: this.title, stroke: line, width: 1.6, points: { show: false } }],
      hooks: {
        setCursor: [u => this.showReadout(u.cursor.idx ?? null)],
        setScale: [
          (u, key) => {
            if (key === 'y') {
              this.node.dataset.yMin = String(u.scales.y.min);
              this.node.dataset.yMax = String(u.scales.y.max);
            }
          }
        ]
      }
    };
  }

  /** The point under the cursor (`idx`), else the newest. */
  private showReadout(idx: number | null): void {
    const i = idx === null ? this.xs.length - 1 : idx;
    if (i < 0 || i >= this.xs.length) {
      return;
    }
    this.readout.dataset.hover = idx === null ? 'no' : 'yes';
    this.readout.dataset.step = String(this.xs[i]);
    this.readout.dataset.value = String(this.ys[i]);
    this.readout.textContent = `${this.stepLabel} ${fmtValue(this.xs[i])} · ${fmtValue(this.ys[i])}`;
  }
}

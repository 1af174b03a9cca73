/**
 * Hand-written SVG line charts (no dependency): stacked panels sharing the x axis (request
 * index), each with its own y axis starting at 0, and a legend per panel.
 */
export interface ChartSeries {
  name: string;
  color: string;
  values: readonly number[];
  dashed?: boolean;
}

export interface ChartPanel {
  title: string;
  series: readonly ChartSeries[];
}

export interface ChartOptions {
  title: string;
  subtitle?: string;
  width?: number;
  panelHeight?: number;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** A "nice" axis maximum ≥ max: 1, 2 or 5 × a power of ten. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

function tickLabel(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return String(+n.toFixed(1));
}

const MARGIN = { left: 64, right: 16, top: 28, bottom: 34 };
const LEGEND_ROW = 16;

function panelSvg(panel: ChartPanel, top: number, width: number, height: number, count: number): string {
  const x0 = MARGIN.left;
  const plotW = width - MARGIN.left - MARGIN.right;
  const legendH = LEGEND_ROW * Math.ceil(panel.series.length / 2);
  const y0 = top + MARGIN.top + legendH;
  const plotH = height - MARGIN.top - MARGIN.bottom - legendH;
  const max = niceMax(Math.max(0, ...panel.series.flatMap((s) => s.values.filter(Number.isFinite))));
  const xAt = (i: number) => x0 + (count <= 1 ? 0 : (i / (count - 1)) * plotW);
  const yAt = (v: number) => y0 + plotH - (Math.max(0, v) / max) * plotH;
  const out: string[] = [`<g class="panel">`, `<text x="${x0}" y="${top + 18}" font-size="13" font-weight="bold">${escapeXml(panel.title)}</text>`];
  panel.series.forEach((s, i) => {
    const lx = x0 + (i % 2) * (plotW / 2);
    const ly = top + MARGIN.top + LEGEND_ROW * Math.floor(i / 2) + 10;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 18}" y2="${ly - 4}" stroke="${escapeXml(s.color)}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ""}/>`,
      `<text x="${lx + 24}" y="${ly}" font-size="11">${escapeXml(s.name)}</text>`,
    );
  });
  for (let t = 0; t <= 4; t++) {
    const v = (max * t) / 4;
    const y = yAt(v).toFixed(1);
    out.push(`<line x1="${x0}" y1="${y}" x2="${x0 + plotW}" y2="${y}" stroke="#ddd" stroke-width="1"/>`);
    out.push(`<text x="${x0 - 6}" y="${y}" font-size="10" text-anchor="end" dominant-baseline="middle">${tickLabel(v)}</text>`);
  }
  const xTicks = Math.min(10, Math.max(1, count - 1));
  for (let t = 0; t <= xTicks; t++) {
    const i = Math.round(((count - 1) * t) / xTicks);
    out.push(`<text x="${xAt(i).toFixed(1)}" y="${y0 + plotH + 14}" font-size="10" text-anchor="middle">${Math.max(0, i)}</text>`);
  }
  out.push(`<text x="${x0 + plotW / 2}" y="${y0 + plotH + 28}" font-size="10" text-anchor="middle">request</text>`);
  out.push(`<rect x="${x0}" y="${y0}" width="${plotW}" height="${plotH}" fill="none" stroke="#888" stroke-width="1"/>`);
  for (const s of panel.series) {
    const points = s.values.map((v, i) => `${xAt(i).toFixed(1)},${yAt(Number.isFinite(v) ? v : 0).toFixed(1)}`).join(" ");
    out.push(
      `<polyline data-series="${escapeXml(s.name)}" fill="none" stroke="${escapeXml(s.color)}" stroke-width="1.5"${s.dashed ? ' stroke-dasharray="4 3"' : ""} points="${points}"/>`,
    );
  }
  out.push(`</g>`);
  return out.join("\n");
}

export function renderLineChart(panels: readonly ChartPanel[], options: ChartOptions): string {
  const width = options.width ?? 960;
  const panelHeight = options.panelHeight ?? 300;
  const header = options.subtitle ? 48 : 32;
  const height = header + panels.length * panelHeight;
  const count = Math.max(0, ...panels.flatMap((p) => p.series.map((s) => s.values.length)));
  const body = panels.map((p, i) => panelSvg(p, header + i * panelHeight, width, panelHeight, count));
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${MARGIN.left}" y="20" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
    ...(options.subtitle ? [`<text x="${MARGIN.left}" y="38" font-size="11" fill="#555">${escapeXml(options.subtitle)}</text>`] : []),
    ...body,
    `</svg>`,
    "",
  ].join("\n");
}

export interface SessionChartInput {
  title: string;
  subtitle?: string;
  bare: { contextTokens: readonly number[]; read: readonly number[]; write: readonly number[] };
  keeper: { contextTokens: readonly number[]; read: readonly number[]; write: readonly number[] };
  keeperName?: string;
}

/** The per-session chart: context tokens per request, and cache read / write per request. */
export function sessionChart(input: SessionChartInput): string {
  const k = input.keeperName ?? "keeper";
  return renderLineChart(
    [
      {
        title: "Context tokens per request",
        series: [
          { name: "bare: context tokens", color: "#888888", values: input.bare.contextTokens },
          { name: `${k}: context tokens`, color: "#1f77b4", values: input.keeper.contextTokens },
        ],
      },
      {
        title: "Cache read / write tokens per request",
        series: [
          { name: "bare: cache read", color: "#888888", values: input.bare.read },
          { name: `${k}: cache read`, color: "#1f77b4", values: input.keeper.read },
          { name: "bare: cache write", color: "#d62728", values: input.bare.write, dashed: true },
          { name: `${k}: cache write`, color: "#ff7f0e", values: input.keeper.write, dashed: true },
        ],
      },
    ],
    { title: input.title, ...(input.subtitle ? { subtitle: input.subtitle } : {}) },
  );
}

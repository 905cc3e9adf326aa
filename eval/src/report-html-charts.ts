import type { CaseResult } from "../../daemon/src/contracts/eval-report.js";
import { escapeHtml } from "./report-html-escape.js";

/**
 * Inline SVG charts for the report page: drawn on the host from numbers, no
 * script and nothing fetched at view time.
 */
export const VERDICT_COLOR: Record<CaseResult["verdict"], string> = {
  passed: "#2e7d32",
  failed: "#c62828",
  needs_human: "#ef6c00",
  error: "#6a1b9a",
};

/** One row per case: its verdict's colour and a bar of its wall time, so slow and failing cases stand out together. */
export function caseChart(cases: CaseResult[]): string {
  const rowH = 20;
  const labelW = 220;
  const barW = 360;
  const maxMs = Math.max(1, ...cases.map((c) => c.wall_ms));
  const rows = cases.map((c, i) => {
    const y = i * rowH;
    const w = Math.max(2, Math.round((c.wall_ms / maxMs) * barW));
    const id = escapeHtml(c.id.length > 32 ? `${c.id.slice(0, 31)}…` : c.id);
    return (
      `<g><title>${escapeHtml(`${c.id}: ${c.verdict}, ${seconds(c.wall_ms)}, ${c.tool_calls} tool calls`)}</title>` +
      `<rect x="0" y="${y + 3}" width="14" height="14" fill="${VERDICT_COLOR[c.verdict]}"/>` +
      `<text x="20" y="${y + 15}" class="lbl">${id}</text>` +
      `<rect x="${labelW}" y="${y + 4}" width="${w}" height="12" fill="${VERDICT_COLOR[c.verdict]}" opacity="0.55"/>` +
      `<text x="${labelW + w + 6}" y="${y + 15}" class="lbl">${escapeHtml(`${c.verdict} · ${seconds(c.wall_ms)}`)}</text></g>`
    );
  });
  const h = Math.max(rowH, cases.length * rowH);
  return `<svg class="chart" role="img" aria-label="verdict and wall time by case" width="${labelW + barW + 160}" height="${h}" viewBox="0 0 ${labelW + barW + 160} ${h}">${rows.join("")}</svg>`;
}

/** A histogram of one figure over the cases: bins of equal width, the count on each bar. */
export function histogram(values: number[], label: string, unit: (v: number) => string): string {
  const W = 360;
  const H = 140;
  const base = H - 30;
  if (values.length === 0) return `<p class="muted">no cases</p>`;
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const bins = Math.max(1, Math.min(10, new Set(values).size));
  const width = hi === lo ? 1 : (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]! += 1;
  const top = Math.max(...counts);
  const bw = W / bins;
  const bars = counts.map((n, i) => {
    const h = Math.round((n / top) * (base - 16));
    const from = lo + i * width;
    const title = hi === lo ? unit(lo) : `${unit(from)} – ${unit(from + width)}`;
    return (
      `<g><title>${escapeHtml(`${title}: ${n} case(s)`)}</title>` +
      `<rect x="${Math.round(i * bw) + 1}" y="${base - h}" width="${Math.max(1, Math.round(bw) - 2)}" height="${h}" fill="#1565c0"/>` +
      (n > 0 ? `<text x="${Math.round(i * bw + bw / 2)}" y="${base - h - 3}" text-anchor="middle" class="lbl">${n}</text>` : "") +
      "</g>"
    );
  });
  return (
    `<svg class="chart" role="img" aria-label="${escapeHtml(label)}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">` +
    `<line x1="0" y1="${base}" x2="${W}" y2="${base}" stroke="#888"/>${bars.join("")}` +
    `<text x="0" y="${H - 12}" class="lbl">${escapeHtml(unit(lo))}</text>` +
    `<text x="${W}" y="${H - 12}" text-anchor="end" class="lbl">${escapeHtml(unit(hi))}</text>` +
    `<text x="${W / 2}" y="${H - 1}" text-anchor="middle" class="lbl">${escapeHtml(label)}</text></svg>`
  );
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

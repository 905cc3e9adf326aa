import { open } from "node:fs/promises";
import path from "node:path";
import type { CaseResult, EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { caseChart, histogram, seconds, VERDICT_COLOR } from "./report-html-charts.js";
import { escapeHtml as e, jsonText } from "./report-html-escape.js";
import { readEvalReport } from "./report-read.js";
import { writeAtomic } from "./run-state.js";

/**
 * eval-report.html: one self-contained page. No script, and a CSP that forbids
 * every load except inline style and data: images, so opening a report (which
 * holds model-written diffs) fetches nothing and runs nothing.
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
/** a diff beyond this is cut on the page (the full file stays in diffs/) */
export const DIFF_CAP_BYTES = 256 * 1024;
/** all diffs on one page together: a large suite's page must still open in a browser */
export const PAGE_DIFF_BUDGET_BYTES = 16 * 1024 * 1024;

export interface ReportFiles {
  /** a case's diff by its report-relative path; null when there is none or it cannot be read */
  diff(rel: string): string | null;
}

export function renderReportHtml(report: EvalReport, files: ReportFiles): string {
  const a = report.aggregates;
  const title = `mini-agent eval: ${a.passed}/${a.cases} passed`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<style>${STYLE}</style></head>
<body>
<h1>mini-agent eval report</h1>
${summary(report)}
<h2>Cases</h2>
${caseChart(report.cases)}
<h2>Distributions</h2>
<div class="row"><figure>${histogram(
    report.cases.map((c) => c.wall_ms),
    "wall time per case",
    seconds,
  )}</figure>
<figure>${histogram(
    report.cases.map((c) => c.tool_calls),
    "tool calls per case",
    (v) => String(Math.round(v)),
  )}</figure></div>
<h2>Rule failures</h2>
${ruleFailures(report)}
<h2>Each case</h2>
<p class="muted">cases that did not pass first, each with the Verifier's reasons and the runner's own first lines</p>
${failuresFirst(report.cases)
  .map(([c, i]) => caseSection(c, i, files))
  .join("\n")}
</body></html>
`;
}

const VERDICT_ORDER: Record<CaseResult["verdict"], number> = { failed: 0, error: 1, needs_human: 2, passed: 3 };

/** Cases that need a reader's attention first; each keeps its index (its anchor, `case-N`, as the chart links it). */
function failuresFirst(cases: CaseResult[]): Array<[CaseResult, number]> {
  return cases.map((c, i) => [c, i] as [CaseResult, number]).sort(([a, i], [b, j]) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] || i - j);
}

/** One bar of the verdicts' shares, in their colours: the suite's state at a glance. */
function verdictBar(report: EvalReport): string {
  const a = report.aggregates;
  const parts: Array<[CaseResult["verdict"], number]> = [
    ["passed", a.passed],
    ["failed", a.failed],
    ["needs_human", a.needs_human],
    ["error", a.errors],
  ];
  const total = Math.max(1, a.cases);
  return `<div class="verdict-bar" role="img" aria-label="${e(parts.map(([k, n]) => `${n} ${k}`).join(", "))}">${parts
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `<span style="width:${((n / total) * 100).toFixed(2)}%;background:${VERDICT_COLOR[k]}" title="${e(`${n} ${k}`)}"></span>`)
    .join("")}</div>`;
}

function summary(report: EvalReport): string {
  const a = report.aggregates;
  const s = report.settings;
  const rows: Array<[string, string]> = [
    ["passed", String(a.passed)],
    ["failed", String(a.failed)],
    ["needs human", String(a.needs_human)],
    ["error", String(a.errors)],
    ["cases", String(a.cases)],
  ];
  const facts: Array<[string, string]> = [
    ["settings", `model ${s.model}, runtime ${s.runtime}, policy profile ${s.policy_profile}, concurrency ${s.concurrency}`],
    ["suite", report.suite.hash],
    ["started", report.started_at],
    ["finished", report.finished_at],
    ["wall time per case", `p50 ${seconds(a.wall_ms.p50)}, p95 ${seconds(a.wall_ms.p95)}, mean ${seconds(a.wall_ms.mean)}`],
    ["tool calls per case", `p50 ${a.tool_calls.p50}, p95 ${a.tool_calls.p95}, mean ${a.tool_calls.mean.toFixed(1)}`],
    ["tokens", `prompt ${a.tokens.prompt}, completion ${a.tokens.completion}, mean per case ${a.tokens.mean_per_case.toFixed(0)}`],
    ["protocol error rate", `${(a.protocol_error_rate * 100).toFixed(1)} % of tool calls`],
  ];
  return `<section id="summary"><p class="big">pass rate <b>${(a.pass_rate * 100).toFixed(1)} %</b> (${a.passed} of ${a.cases} cases passed)</p>
${verdictBar(report)}
<table class="counts"><tr>${rows.map(([k]) => `<th>${e(k)}</th>`).join("")}</tr><tr>${rows.map(([, v]) => `<td>${e(v)}</td>`).join("")}</tr></table>
<table class="facts">${facts.map(([k, v]) => `<tr><th>${e(k)}</th><td>${e(v)}</td></tr>`).join("")}</table></section>`;
}

function ruleFailures(report: EvalReport): string {
  const entries = Object.entries(report.aggregates.rule_failures).sort((x, y) => (y[1] ?? 0) - (x[1] ?? 0));
  if (entries.length === 0) return `<p class="muted">no rule failed</p>`;
  const top = Math.max(1, ...entries.map(([, n]) => n ?? 0));
  return `<table class="rules">${entries
    .map(([rule, n]) => `<tr><th>${e(rule)}</th><td>${n}</td><td><span class="bar" style="width:${Math.round(((n ?? 0) / top) * 200)}px"></span></td></tr>`)
    .join("")}</table>`;
}

function caseSection(c: CaseResult, i: number, files: ReportFiles): string {
  const diff = c.diff_file === null ? null : files.diff(c.diff_file);
  const counts: Array<[string, string]> = [
    ["tool calls", String(c.tool_calls)],
    ["turns", String(c.turns)],
    ["tokens", `${c.tokens.prompt} + ${c.tokens.completion}`],
    ["wall time", seconds(c.wall_ms)],
    ["approved by policy", String(c.prompts_by_policy)],
    ["uncertain", String(c.uncertain)],
    ["Verifier rejections", String(c.verifier_rejections)],
    ["protocol errors", String(c.protocol_errors)],
    ["attempts", String(c.attempts)],
  ];
  return `<section class="case" id="case-${i}">
<h3><span class="verdict" style="background:${VERDICT_COLOR[c.verdict]}">${e(c.verdict)}</span> <span class="id">${e(c.id)}</span></h3>
<p>expected <b>${e(c.expected_status)}</b>; ended <b>${e(c.status ?? "never ran")}</b>${c.reason === null ? "" : `: ${e(c.reason)}`}${c.run_id === null ? "" : ` <span class="muted">(run ${e(c.run_id)})</span>`}</p>
${c.error === null ? "" : `<p class="error">error: ${e(c.error)}</p>`}
${c.why && c.why.length > 0 ? `<pre class="why">${c.why.map(e).join("\n")}</pre>` : ""}
<table class="rules"><tr><th>rule</th><th>expected</th><th>observed</th><th>passed</th></tr>${c.rules
    .map(
      (r) =>
        `<tr class="${r.passed ? "ok" : "bad"}"><td>${e(r.rule)}</td><td><code>${e(jsonText(r.expected))}</code></td><td><code>${e(jsonText(r.observed))}</code></td><td>${r.passed ? "yes" : "NO"}</td></tr>`,
    )
    .join("")}</table>
<p class="counts">${counts.map(([k, v]) => `${e(k)} <b>${e(v)}</b>`).join(" · ")}</p>
${diff === null ? `<p class="muted">no diff</p>` : `<pre class="diff">${diffLines(diff)}</pre>`}
</section>`;
}

function diffLines(diff: string): string {
  return diff
    .split("\n")
    .map((line) => {
      const cls =
        line.startsWith("+++") || line.startsWith("---")
          ? "file"
          : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
              ? "del"
              : line.startsWith("@@")
                ? "hunk"
                : "";
      return cls === "" ? e(line) : `<span class="${cls}">${e(line)}</span>`;
    })
    .join("\n");
}

/**
 * Reads `<outputDir>/eval-report.json` (validated), renders the page with each
 * case's diff (bounded, and only from inside outputDir: a report naming
 * `../x` gets no diff shown) and writes `eval-report.html` atomically.
 */
export async function writeReportHtml(outputDir: string, caps = { perDiff: DIFF_CAP_BYTES, page: PAGE_DIFF_BUDGET_BYTES }): Promise<string> {
  const report = await readEvalReport(path.join(outputDir, "eval-report.json"));
  const diffs = new Map<string, string | null>();
  let left = caps.page;
  for (const c of report.cases) {
    if (c.diff_file === null || diffs.has(c.diff_file)) continue;
    if (left <= 0) {
      diffs.set(c.diff_file, `… not shown: this page already holds ${caps.page} bytes of diffs; the diff is ${c.diff_file}`);
      continue;
    }
    const text = await readDiff(outputDir, c.diff_file, Math.min(caps.perDiff, left));
    if (text !== null) left -= Buffer.byteLength(text);
    diffs.set(c.diff_file, text);
  }
  const html = renderReportHtml(report, { diff: (rel) => diffs.get(rel) ?? null });
  const target = path.join(outputDir, "eval-report.html");
  // a page to open and share: readable by others, unlike the run's own records
  writeAtomic(target, html, 0o644);
  return target;
}

async function readDiff(outputDir: string, rel: string, cap: number): Promise<string | null> {
  const root = path.resolve(outputDir);
  const file = path.resolve(root, rel);
  if (path.isAbsolute(rel) || !file.startsWith(root + path.sep)) return null;
  let handle: Awaited<ReturnType<typeof open>> | null = null;
  try {
    handle = await open(file, "r");
    const size = (await handle.stat()).size;
    const buf = Buffer.alloc(Math.min(size, cap));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString("utf8");
    return size > cap ? `${text}\n… cut at ${cap} of ${size} bytes; the whole diff is ${rel}` : text;
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px;margin:0 0 6px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
.big{font-size:18px}.muted{color:#777}.error{color:#c62828}.row{display:flex;flex-wrap:wrap;gap:24px}figure{margin:0}
.chart .lbl{font:11px system-ui,sans-serif;fill:#333}.bar{display:inline-block;height:10px;background:#c62828}
.case{border:1px solid #ddd;border-radius:6px;padding:10px 14px;margin:12px 0}.id{font-family:ui-monospace,monospace;word-break:break-all}
.verdict{color:#fff;border-radius:4px;padding:1px 8px;font-size:13px}tr.bad td{background:#fdecea}code{word-break:break-all}
pre.diff{background:#f7f7f7;padding:8px;overflow:auto;max-height:480px;font:12px/1.4 ui-monospace,monospace;white-space:pre}
.diff .add{color:#1b5e20;background:#e8f5e9}.diff .del{color:#b71c1c;background:#ffebee}.diff .hunk{color:#6a1b9a}.diff .file{font-weight:bold}
.verdict-bar{display:flex;height:14px;border-radius:4px;overflow:hidden;background:#eee;margin:6px 0 10px;max-width:600px}.verdict-bar span{display:block;height:100%}
pre.why{background:#fff8e1;padding:8px;overflow:auto;max-height:320px;font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap}`;

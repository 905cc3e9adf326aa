import { termSafe, EXIT } from "../../client-lib/index.js";
import { stat } from "node:fs/promises";
import path from "node:path";
import { parseCli } from "../../daemon/src/config/cli-args.js";
import { usageFail } from "./usage.js";
import type { EvalCommand, EvalIO } from "./command.js";
import { computeMetrics, type Count, type Metrics } from "./metrics.js";
import { readTraceFiles } from "./metrics-read.js";

const USAGE = `usage: mini-agent-client eval metrics DIR [--json]
DIR: an eval output folder (its traces/) or any folder of run trace files (*.jsonl, e.g. <state-dir>/traces).
Prints recurring error codes, approval wait time, output truncation rate, Verifier rejections and
uncertain recoveries. Reads files only; a file that is not a trace file is reported and skipped.`;

export const metricsCommand: EvalCommand = {
  async main(argv: string[], io: EvalIO): Promise<number> {
    const parsed = parseCli(argv, {
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      socket: { type: "string" },
      "state-dir": { type: "string" },
    });
    if (!parsed.ok) return usageFail(io, "eval metrics", parsed.message);
    if (parsed.values.help) {
      io.out(`${USAGE}\n`);
      return EXIT.ok;
    }
    if (parsed.positionals.length !== 1) return usageFail(io, "eval metrics", `give exactly one DIR (got ${parsed.positionals.length})`);
    const dir = path.resolve(io.cwd, parsed.positionals[0] as string);
    const st = await stat(dir).catch(() => null);
    if (!st?.isDirectory()) {
      io.err(`mini-agent-client eval metrics: ${termSafe(dir)} is not a folder\n`);
      return EXIT.usage;
    }
    const { folder, inputs, skipped } = await readTraceFiles(dir);
    const metrics = computeMetrics(inputs, skipped);
    io.out(parsed.values.json ? `${JSON.stringify({ folder, ...metrics })}\n` : renderMetrics(folder, metrics));
    return EXIT.ok;
  },
};

export function renderMetrics(folder: string, m: Metrics): string {
  const out: string[] = [`trace files in ${folder}: ${m.runs_read} run(s) read, ${m.torn.length} torn, ${m.skipped.length} skipped`];
  for (const t of m.torn)
    out.push(`  torn: ${t.file} line ${t.line} (${t.bytes} bytes, ${t.why === "no_newline" ? "no newline" : "not a valid event"}; left out)`);
  for (const s of m.skipped) out.push(`  skipped: ${s.file}: ${s.why}`);
  for (const u of m.unreadable) out.push(`  unreadable: ${u.file} event ${u.seq} (${u.type}: a type or payload this version does not know; left out)`);
  out.push("", "recurring error codes");
  out.push(...table(["code", "count", "runs"], m.error_codes.map(row)));
  const a = m.approvals;
  const w = a.wait_ms;
  out.push(
    "",
    `approvals: ${a.requested} asked of a person, ${a.by_person} answered by a person, ${a.by_policy} by the policy, ${a.refused} refused (stale/denied), ${a.unanswered} unanswered`,
    `approval wait (asked -> answered): ${w === null ? "none" : `p50 ${ms(w.p50)}, p95 ${ms(w.p95)}, max ${ms(w.max)} over ${w.count}`}`,
    `output truncation: ${m.truncation.truncated} of ${m.truncation.observations} observations (${(m.truncation.rate * 100).toFixed(1)} %)`,
    `Verifier rejections: ${m.verifier.rejections}`,
  );
  if (m.verifier.reasons.length > 0) out.push(...table(["reason", "count", "runs"], m.verifier.reasons.map(row)).map((l) => `  ${l}`));
  const u = m.uncertain;
  out.push(
    `uncertain recoveries: ${u.ended_uncertain.length} run(s) ended uncertain, ${u.resumed_runs} run(s) resumed (${u.resumes} resume(s)), ${u.recovered_writes} write(s) recovered by receipt`,
  );
  for (const r of u.ended_uncertain) out.push(`  uncertain: ${r.run}${r.path === null ? "" : ` (${r.path})`}`);
  // file names and paths come from trace folders and runs: each line terminal-safe
  return `${out.map((l) => termSafe(l)).join("\n")}\n`;
}

function row(c: Count): string[] {
  return [c.key, String(c.count), String(c.runs)];
}

function table(head: string[], rows: string[][]): string[] {
  if (rows.length === 0) return ["(none)"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  return [head, ...rows].map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join("  "));
}

function ms(x: number): string {
  return x < 1000 ? `${x} ms` : `${(x / 1000).toFixed(1)} s`;
}

import { isPassingReport, readLatestReport } from "../../../probes/report-store.js";
import type { IsolationKey, IsolationReportSummary } from "./isolation-facts.js";

/**
 * The latest isolation report stored for exactly this key, passing OR failing,
 * as the gate reads it: the gate must name the failed probe (`probe_failed:<id>`)
 * rather than call a failed sandbox merely "stale".
 */
export async function readIsolationReportSummary(stateDir: string, key: IsolationKey): Promise<IsolationReportSummary | null> {
  const r = await readLatestReport(stateDir, key);
  if (!r) return null;
  if (isPassingReport(r)) return { passed: true, generated_at: r.generated_at, failed_probe_ids: [] };
  const failed = r.probes.filter((p) => !p.passed).map((p) => p.id);
  // a report that says passed but has no probes is not a pass
  return { passed: false, generated_at: r.generated_at, failed_probe_ids: failed.length > 0 ? failed : ["report_incomplete"] };
}

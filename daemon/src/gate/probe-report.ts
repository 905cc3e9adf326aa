import fs from "node:fs/promises";
import path from "node:path";
import { keyId, readLatestPassingReport } from "../../../probes/report-store.js";
import { IsolationReport } from "../../../probes/types.js";
import { statePath } from "../config/state-dir.js";
import type { IsolationKey, IsolationReportSummary } from "./isolation-facts.js";

/**
 * The latest isolation report stored for exactly this key, passing OR failing,
 * as the gate reads it. readLatestPassingReport answers null for a failing
 * report, but the gate must name the failed probe (`probe_failed:<id>`) rather
 * than call a failed sandbox merely "stale", so a failing report is read too.
 */
export async function readIsolationReportSummary(stateDir: string, key: IsolationKey): Promise<IsolationReportSummary | null> {
  const passing = await readLatestPassingReport(stateDir, key);
  if (passing) return { passed: true, generated_at: passing.generated_at, failed_probe_ids: [] };
  // same place probes/report-store.ts writes to: <reports>/<keyId>.json
  let json: unknown;
  try {
    json = JSON.parse(await fs.readFile(path.join(statePath(stateDir, "reports"), `${keyId(key)}.json`), "utf8"));
  } catch {
    return null;
  }
  const parsed = IsolationReport.safeParse(json);
  if (!parsed.success) return null;
  const r = parsed.data;
  const same = r.image_digest === key.image_digest && r.host_config_hash === key.host_config_hash && r.engine_version === key.engine_version && r.runtime === key.runtime;
  if (!same) return null;
  const failed = r.probes.filter((p) => !p.passed).map((p) => p.id);
  // a report that says passed but was refused by readLatestPassingReport (e.g. no probes) is not a pass
  return { passed: false, generated_at: r.generated_at, failed_probe_ids: failed.length > 0 ? failed : ["report_incomplete"] };
}

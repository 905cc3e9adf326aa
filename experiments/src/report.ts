import fs from "node:fs/promises";
import path from "node:path";
import { sha256Hex } from "../../daemon/src/workspace/hash.js";
import { stableStringify } from "./canonical.js";
import type { EnvironmentFacts } from "./environment.js";
import type { GroupOutcome } from "./runner.js";

/**
 * Files of one report:
 *   group-N.json            scenarios + per-scenario wall-clock, backend and details + full environment (not canonical)
 *   environment.json        the full environment (canonical and volatile facts)
 *   offline-canonical.json  scenarios of every group run + the canonical environment;
 *                           no paths, times or random ids: two runs give the same bytes
 */
export const CANONICAL_FILE = "offline-canonical.json";
export const REPORT_SCHEMA_VERSION = 1;

export interface WrittenReport {
  canonicalSha256: string;
  passed: boolean;
  /** a scenario failed that ran (not merely one that needed the container and found no engine) */
  measuredFailure: boolean;
  /** some scenario needed the container and no engine was reachable */
  unavailable: boolean;
  files: string[];
}

export async function writeReport(dir: string, outcomes: GroupOutcome[], env: EnvironmentFacts): Promise<WrittenReport> {
  const files: string[] = [];
  const write = async (name: string, value: unknown) => {
    await fs.writeFile(path.join(dir, name), stableStringify(value));
    files.push(name);
  };
  for (const o of outcomes) {
    await write(`${o.group}.json`, {
      schema_version: REPORT_SCHEMA_VERSION,
      group: o.group,
      title: o.title,
      passed: o.passed,
      scenarios: o.scenarios,
      non_canonical: { duration_ms: o.duration_ms, backends: o.backends, details: o.details, environment: env },
    });
  }
  await write("environment.json", { schema_version: REPORT_SCHEMA_VERSION, ...env });
  const passed = outcomes.every((o) => o.passed);
  const canonical = {
    schema_version: REPORT_SCHEMA_VERSION,
    groups_run: outcomes.map((o) => o.group),
    passed,
    environment: env.canonical,
    groups: outcomes.map((o) => ({ group: o.group, title: o.title, passed: o.passed, scenarios: o.scenarios })),
  };
  const text = stableStringify(canonical);
  await fs.writeFile(path.join(dir, CANONICAL_FILE), text);
  files.push(CANONICAL_FILE);
  const measuredFailure = outcomes.some((o) => o.scenarios.some((s) => !s.passed && !o.unavailable.includes(s.id)));
  const unavailable = outcomes.some((o) => o.unavailable.length > 0);
  return { canonicalSha256: sha256Hex(text), passed, measuredFailure, unavailable, files };
}

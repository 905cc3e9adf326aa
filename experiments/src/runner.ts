import fs from "node:fs/promises";
import path from "node:path";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { findHostPath, replaceRoots, sameJson } from "./canonical.js";
import type { ExperimentContext, GroupDefinition, Json, ScenarioResult } from "./types.js";

export interface GroupOutcome {
  group: GroupDefinition["id"];
  title: string;
  passed: boolean;
  scenarios: ScenarioResult[];
  /** wall-clock per scenario: recorded in the group file, never in the canonical file */
  duration_ms: Record<string, number>;
  /** the backend each scenario ran on (group file only; the canonical scenario names it only when it is not the container) */
  backends: Record<string, ExperimentContext["backend"]>;
  /** scenarios that needed the container and found no engine: not run, so neither passed nor a measured failure */
  unavailable: string[];
  /** what scenarios recorded beyond their observation (ExperimentContext.recordDetails): group file only */
  details: Record<string, Json>;
}

export interface RunnerDeps {
  now(): number;
  /** makes an empty scratch dir for one scenario */
  scratchDir(id: string): Promise<string>;
  /** told when a scenario throws (the report keeps only the code; the operator may want the message) */
  onError?(scenario: string, err: unknown): void;
}

/** An error becomes the observation: its stable code, never its message text or stack. */
function observationOf(err: unknown): Json {
  return { error: isMiniAgentError(err) ? err.code : err instanceof Error ? err.name : "unknown" };
}

export async function runGroup(
  group: GroupDefinition,
  base: Omit<ExperimentContext, "scratch" | "backend" | "recordDetails">,
  deps: RunnerDeps,
): Promise<GroupOutcome> {
  const scenarios: ScenarioResult[] = [];
  const duration_ms: Record<string, number> = {};
  const backends: GroupOutcome["backends"] = {};
  const unavailable: string[] = [];
  const details: Record<string, Json> = {};
  for (const s of group.scenarios) {
    const scratch = await deps.scratchDir(`${group.id}-${s.id}`);
    // with an engine every scenario uses the container, as before; without one only those that claim no isolation move to the host
    const backend = base.engine.available || !s.runsWithoutEngine ? "container" : "trusted_local";
    backends[s.id] = backend;
    if (!base.engine.available && backend === "container") unavailable.push(s.id);
    const t0 = deps.now();
    let observed: Json;
    try {
      // a JSON round trip: what is written is exactly what is compared
      const recordDetails = (d: unknown) => {
        details[s.id] = JSON.parse(JSON.stringify(d ?? null)) as Json;
      };
      observed = JSON.parse(JSON.stringify((await s.run({ ...base, scratch, backend, recordDetails })) ?? null)) as Json;
    } catch (err) {
      deps.onError?.(`${group.id}/${s.id}`, err);
      observed = observationOf(err);
    } finally {
      duration_ms[s.id] = Math.round(deps.now() - t0);
      await fs.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
    }
    observed = replaceRoots(observed, [
      [scratch, "<scratch>"],
      [base.repoRoot, "<repo>"],
    ]);
    const leaked = findHostPath(observed);
    if (leaked !== null) observed = { error: "host_path_in_observation" };
    const passed = s.check ? s.check(observed, s.expected) : sameJson(observed, s.expected);
    scenarios.push({
      id: s.id,
      title: s.title,
      expected: s.expected,
      observed,
      criterion: s.criterion,
      passed,
      does_not_prove: s.does_not_prove,
      ...(backend !== "container" && { backend }),
    });
  }
  return { group: group.id, title: group.title, passed: scenarios.every((s) => s.passed), scenarios, duration_ms, backends, unavailable, details };
}

export function scratchDirIn(root: string): (id: string) => Promise<string> {
  return async (id) => {
    const dir = path.join(root, id);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir, { recursive: true });
    return dir;
  };
}

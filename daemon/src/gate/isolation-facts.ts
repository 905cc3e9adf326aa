import type { Runtime } from "../contracts/sandbox.js";

/**
 * What the live gate needs to know about the sandbox, behind a small interface
 * so the gate's ORDER and verdicts can be tested with each fact wrong in turn.
 * The real implementation (isolation-facts-sandbox.ts) asks the engine and the
 * probes' report store; it never starts a container.
 */
export interface IsolationKey {
  /** the image family (node, python, go): reports are per family */
  image_family: string;
  image_digest: string;
  host_config_hash: string;
  engine_version: string;
  runtime: Runtime;
}

export type CurrentKeyResult = { ok: true; key: IsolationKey } | { ok: false; reason: "runtime_unavailable" | "image_missing"; detail: string };

/** The latest isolation report stored for one key, passing or not. */
export interface IsolationReportSummary {
  passed: boolean;
  /** ISO-8601 time the probes ran */
  generated_at: string;
  /** ids of the probes that did not pass (empty when passed) */
  failed_probe_ids: string[];
}

export interface IsolationFacts {
  /**
   * engine reachable? pinned image of this family present? then the current key of that
   * family (its own HostConfig hash). No family: the configured one. `runtime`: the run's own
   * (`--runtime`), whose HostConfig and report differ; absent: the configured one. Cheap: no container is run.
   */
  currentKey(family?: string, runtime?: Runtime): Promise<CurrentKeyResult>;
  /** the most recent report for exactly this key, or null when there is none */
  latestReport(key: IsolationKey): Promise<IsolationReportSummary | null>;
}

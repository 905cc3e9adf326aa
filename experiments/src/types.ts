import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import type { Executor } from "../../daemon/src/sandbox/executor.js";

/**
 * One scenario of the offline report. `observed` is what running the real code
 * measured; it is never derived from `expected`. `passed` is computed by the
 * scenario's `check`, which the `criterion` text describes.
 */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface ScenarioResult {
  id: string;
  title: string;
  expected: Json;
  observed: Json;
  criterion: string;
  passed: boolean;
  does_not_prove: string;
  /**
   * Present only when the scenario ran on another backend than the report's own
   * (the container, environment.backend): with no engine, a scenario that claims
   * nothing about isolation runs on trusted_local. Absent otherwise, so the
   * canonical bytes of a report with an engine are what they were before.
   */
  backend?: "trusted_local";
}

export interface Scenario {
  id: string;
  title: string;
  expected: Json;
  criterion: string;
  does_not_prove: string;
  /** measures; may throw (the error's code becomes the observation). Returned as plain JSON data. */
  run(ctx: ExperimentContext): Promise<unknown>;
  /** default: observed deep-equals expected (canonical JSON) */
  check?(observed: Json, expected: Json): boolean;
  /**
   * true: the scenario claims nothing about isolation, so with no reachable
   * engine it runs on the trusted_local backend (host processes, the built-in
   * replays only) instead of reporting runtime_unavailable. Default false: the
   * scenario needs the container.
   */
  runsWithoutEngine?: boolean;
}

export interface GroupDefinition {
  id: "group-1" | "group-2" | "group-3" | "group-4" | "group-5";
  title: string;
  scenarios: Scenario[];
}

/** Facts about the sandbox engine, measured once per report. */
export interface EngineFacts {
  available: boolean;
  reason: string | null;
  runtime: string | null;
  image_digest: string | null;
  engine_version: string | null;
}

export interface ExperimentContext {
  /** a fresh temp dir per scenario; removed afterwards */
  scratch: string;
  /** the backend this scenario's runs use: the container, or trusted_local when no engine is reachable and the scenario allows it */
  backend: "container" | "trusted_local";
  /** repository root (fixtures/ lives here) */
  repoRoot: string;
  /** the container executor; null when no engine is reachable */
  executor: Executor | null;
  /** the container executor of an image family, its image built on first use; throws runtime_unavailable without an engine */
  familyExecutor: (family: ImageFamily) => Promise<Executor>;
  engine: EngineFacts;
  /** the pinned image lock the executor uses (for components that build their own executor) */
  imageLockPath: string | null;
  /** the environment that names the Docker engine (DOCKER_HOST), passed in from the CLI edge */
  dockerEnv: NodeJS.ProcessEnv;
  /** the node binary, for scenarios that need a process of their own (group 3 crashes) */
  nodeExecPath: string;
  /**
   * Keeps what the scenario saw beyond its observation (e.g. every probe's observed
   * values behind a pass/fail) in the group file under non_canonical.details: it may
   * hold paths, ids and timings, so it never enters the canonical file. The last call wins.
   */
  recordDetails(details: unknown): void;
}

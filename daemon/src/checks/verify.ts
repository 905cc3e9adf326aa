import fs from "node:fs/promises";
import { statePath } from "../config/state-dir.js";
import { fileBaselineTestStore } from "../verifier/baseline-tests.js";
import path from "node:path";
import type { VerificationBody, VerifyBeginRequest, VerifyBegunBody, VerifyRequest } from "../contracts/api.js";
import { taskImageFamily } from "../contracts/task-spec.js";
import { MiniAgentError } from "../errors.js";
import { redactDeep } from "../redact/index.js";
import { verify } from "../verifier/verify.js";
import { captureBaseline, sha256Hex } from "../workspace/index.js";
import { requireProvenSandbox } from "./gate.js";
import { dependencyLayersFor } from "./layers.js";
import type { ChecksDeps } from "./ports.js";

/**
 * `verify_begin` / `verify` without a run (issue 28). The baseline is kept where
 * a run keeps its own: a control dir in the daemon's state dir, one per
 * workspace (its real path's hash), so the workspace's code can neither read
 * nor alter it and `verify` hands the UNCHANGED Verifier a `{runControlDir}`
 * exactly as a run's verify step does. Beginning again replaces it.
 */
const CHECKS_DIR = "checks";
const BEGUN_FILE = "begun.json";
const DEFAULT_GOAL = "the work on this workspace since verify_begin";

function controlDirOf(stateDir: string, realWorkspace: string): { dir: string; id: string } {
  const id = `check-${sha256Hex(realWorkspace).slice(0, 16)}`;
  return { dir: path.join(stateDir, CHECKS_DIR, id), id };
}

export async function verifyBegin(req: VerifyBeginRequest, deps: ChecksDeps): Promise<VerifyBegunBody> {
  // drafted only for its refusals (system folders, the state dir, home) and the family the gate is about
  const draft = await deps.draft({
    workspace: req.workspace,
    goal: DEFAULT_GOAL,
    writable: [],
    protect: [],
    ...(req.test !== undefined && { test: req.test }),
    ...(req.image_family !== undefined && { imageFamily: req.image_family }),
  });
  await requireProvenSandbox(deps, taskImageFamily(draft.task));
  const { dir } = controlDirOf(deps.stateDir, draft.workspace);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const recordedAt = (deps.clock ?? (() => new Date()))().toISOString();
  const baseline = await captureBaseline(draft.workspace, dir);
  await fs.writeFile(path.join(dir, BEGUN_FILE), JSON.stringify({ workspace: draft.workspace, recorded_at: recordedAt }), { mode: 0o600 });
  return {
    kind: "verify_begun",
    workspace: draft.workspace,
    baseline_digest: baseline.manifest.digest,
    files: Object.keys(baseline.manifest.files).length,
    recorded_at: recordedAt,
  };
}

export async function verifyWorkspace(req: VerifyRequest, deps: ChecksDeps): Promise<VerificationBody> {
  const draft = await deps.draft({
    workspace: req.workspace,
    goal: req.goal ?? DEFAULT_GOAL,
    writable: [],
    protect: req.protect,
    ...(req.test !== undefined && { test: req.test }),
    ...(req.image_family !== undefined && { imageFamily: req.image_family }),
  });
  const { dir, id } = controlDirOf(deps.stateDir, draft.workspace);
  const begun = await readBegun(dir);
  const family = taskImageFamily(draft.task);
  await requireProvenSandbox(deps, family);
  const executor = deps.executorFor(family);
  // the baseline copy holds no dependencies: its tests, and the work's, run with the layers a run would mount
  const layers = await dependencyLayersFor(executor, draft);
  const evidence = await verify({
    runId: id,
    task: draft.task,
    workspaceRoot: draft.workspace,
    baseline: { runControlDir: dir },
    acceptanceDir: null,
    executor,
    ...(layers.length > 0 && { dependencyLayers: layers }),
    // the same extra verify commands a run of this workspace gets, and the baseline's tests once per baseline
    policy: deps.policyFor(draft.workspace),
    baselineTests: fileBaselineTestStore(statePath(deps.stateDir, "baselineTests")),
  });
  const body: VerificationBody = {
    kind: "verification",
    workspace: draft.workspace,
    passed: evidence.passed,
    reason: evidence.reason,
    baseline_recorded_at: begun.recorded_at,
    evidence: evidence as unknown as Record<string, unknown>,
  };
  return redactDeep(body, deps.knownSecrets()) as VerificationBody;
}

async function readBegun(dir: string): Promise<{ recorded_at: string }> {
  try {
    const parsed = JSON.parse(await fs.readFile(path.join(dir, BEGUN_FILE), "utf8")) as { recorded_at?: unknown };
    if (typeof parsed.recorded_at === "string") return { recorded_at: parsed.recorded_at };
  } catch {
    // missing or unreadable: no baseline to judge against
  }
  // refused, not judged against "now": a verdict needs a start the caller could not choose afterwards
  throw new MiniAgentError("not_found", "no baseline was recorded for this workspace; call verify_begin before the work starts");
}

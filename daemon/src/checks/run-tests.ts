import type { SandboxTestsBody, SandboxTestsRequest } from "../contracts/api.js";
import { taskImageFamily } from "../contracts/task-spec.js";
import { redactDeep } from "../redact/index.js";
import { runTests } from "../tools/run-tests.js";
import { requireProvenSandbox } from "./gate.js";
import { dependencyLayersFor } from "./layers.js";
import type { ChecksDeps } from "./ports.js";

/** Not a run: the ledger has no row for it, but the container's labels still name what started it. */
const CHECK_RUN_ID = "check-tests";
/** the tool's own budget cap when no run budget applies: the preset's timeout decides */
const NO_RUN_BUDGET_MS = Number.MAX_SAFE_INTEGER;

/**
 * The workspace's tests (detected or given) in a FRESH sandbox, read by
 * run_tests itself: the same invocation, parser, verdict and limits a run's
 * run_tests gets, so nothing here can judge a test differently. The control
 * dir is the state dir: nothing is written there, it only keeps it out of the walk.
 */
export async function sandboxTests(req: SandboxTestsRequest, deps: ChecksDeps): Promise<SandboxTestsBody> {
  const draft = await deps.draft({
    workspace: req.workspace,
    goal: "run the workspace's tests",
    writable: [],
    protect: [],
    ...(req.test !== undefined && { test: req.test }),
    ...(req.image_family !== undefined && { imageFamily: req.image_family }),
  });
  const family = taskImageFamily(draft.task);
  await requireProvenSandbox(deps, family);
  const preset = draft.task.verify_preset;
  const runner = deps.executorFor(family);
  const layers = await dependencyLayersFor(runner, draft);
  const result = await runTests(
    CHECK_RUN_ID,
    { preset },
    {
      task: draft.task,
      workspaceRoot: draft.workspace,
      controlDir: deps.stateDir,
      runner,
      runId: CHECK_RUN_ID,
      timeoutMs: NO_RUN_BUDGET_MS,
      ...(layers.length > 0 && { dependencyLayers: layers }),
    },
  );
  const body: SandboxTestsBody = {
    kind: "sandbox_tests",
    workspace: draft.workspace,
    image_family: family,
    test_source: draft.test_source,
    command: draft.task.test_presets[preset]?.command ?? [],
    green: result.ok,
    code: result.ok ? null : (result.error?.code ?? null),
    message: result.ok ? null : (result.error?.message ?? null),
    result: (result.data ?? {}) as Record<string, unknown>,
    warnings: draft.warnings,
  };
  // the one rule set every sink uses: test output may print what the tests read
  return redactDeep(body, deps.knownSecrets()) as SandboxTestsBody;
}

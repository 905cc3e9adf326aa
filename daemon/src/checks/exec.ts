import type { SandboxExecBody, SandboxExecRequest } from "../contracts/api.js";
import { taskImageFamily } from "../contracts/task-spec.js";
import { isMiniAgentError, MiniAgentError } from "../errors.js";
import { decideCommand } from "../policy/decide-command.js";
import { redactDeep } from "../redact/index.js";
import { runCommand } from "../tools/run-command.js";
import { workspaceDigest } from "../workspace/version.js";
import { requireProvenSandbox } from "./gate.js";
import { dependencyLayersFor } from "./layers.js";
import type { ChecksDeps } from "./ports.js";

const CHECK_RUN_ID = "check-exec";
/** the call's own timeout_seconds (or run_command's cap) decides; there is no run budget */
const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * One argv in the workspace's family sandbox, decided by decideCommand under
 * the policy a run of this workspace would get (daemon file, profile, the
 * workspace's own rules): deny is final, allow runs. `ask` asks a person
 * (approvals.ts): the call is refused with approval_required and an approval id
 * bound to the workspace, the argv and the workspace's digest; once a person
 * approved it (`mini-agent-client approve chk_…`, never the calling agent), the
 * same call with that approval_id runs, once.
 * The sandbox is a warm one opened for this call alone (only a warm sandbox
 * can list the files a command changed) and closed after it; nothing comes back.
 */
export async function sandboxExec(req: SandboxExecRequest, deps: ChecksDeps): Promise<SandboxExecBody> {
  const draft = await draftForExec(req, deps);
  const decision = decideCommand(deps.policyFor(draft.workspace), req.argv);
  if (decision.verdict === "deny") throw new MiniAgentError("policy_denied", decision.reason, { details: { rule: decision.rule } });
  if (decision.verdict === "ask") {
    const digest = await workspaceDigest(draft.workspace, deps.stateDir);
    if (req.approval_id === undefined) {
      const asked = deps.approvals.ask(draft.workspace, req.argv, digest);
      throw new MiniAgentError("approval_required", `${decision.reason}: a person must approve this command first; nothing ran`, {
        details: { rule: decision.rule, approval_id: asked.id, argv: asked.argv, workspace: asked.workspace },
      });
    }
    deps.approvals.use(req.approval_id, draft.workspace, req.argv, digest);
  } else if (req.approval_id !== undefined) {
    // an id for a command the policy does not ask about is a mistake, not a pass
    throw new MiniAgentError("invalid_request", "approval_id is only for a command the policy asks about; this one it does not");
  }
  const family = taskImageFamily(draft.task);
  await requireProvenSandbox(deps, family);
  const executor = deps.executorFor(family);
  const layers = await dependencyLayersFor(executor, draft);
  const session = await executor.openSession(CHECK_RUN_ID, layers);
  try {
    const result = await runCommand(
      CHECK_RUN_ID,
      { argv: req.argv, ...(req.timeout_seconds !== undefined && { timeout_seconds: req.timeout_seconds }) },
      {
        task: draft.task,
        workspaceRoot: draft.workspace,
        controlDir: deps.stateDir,
        session,
        timeoutMs: DEFAULT_TIMEOUT_MS,
        ...(layers.length > 0 && { dependencyLayers: layers }),
      },
    );
    const body: SandboxExecBody = {
      kind: "sandbox_exec",
      workspace: draft.workspace,
      image_family: family,
      rule: decision.rule ?? decision.reason,
      ok: result.ok,
      code: result.ok ? null : (result.error?.code ?? null),
      message: result.ok ? null : (result.error?.message ?? null),
      result: (result.data ?? {}) as Record<string, unknown>,
    };
    return redactDeep(body, deps.knownSecrets()) as SandboxExecBody;
  } finally {
    await session.close();
  }
}

/**
 * The folder drafted as for any check (the same refusals, the same forbidden
 * files). Its family comes from its test command; a folder without one is not
 * refused here (a command needs no tests): it runs in the family asked for, else node.
 */
async function draftForExec(req: SandboxExecRequest, deps: ChecksDeps) {
  const base = {
    workspace: req.workspace,
    goal: "run one command",
    writable: [],
    protect: [],
    ...(req.image_family !== undefined && { imageFamily: req.image_family }),
  };
  try {
    return await deps.draft(base);
  } catch (err) {
    if (!isMiniAgentError(err, "test_command_not_found")) throw err;
    return deps.draft({ ...base, imageFamily: req.image_family ?? "node", test: "node --test" });
  }
}

/**
 * A person's answer to one `sandbox_exec` the command policy sends to `ask`.
 * Inside a run, an approval is bound to the run's action; a check has no run,
 * so its approval is bound here to exactly what would run: the workspace, the
 * argv and the workspace's digest when it was asked. The calling agent never
 * answers it: a person does, with `mini-agent-client approve chk_…` (or through
 * MCP elicitation, which the human's MCP client shows). Used once; stale when
 * the workspace changed or it waited too long. Held in the daemon's memory: a
 * restart asks again, which is never less safe.
 */
import crypto from "node:crypto";
import { canonicalJson } from "../workspace/hash.js";
import { MiniAgentError } from "../errors.js";

export const CHECK_APPROVAL_ID = /^chk_[0-9a-f]{20}$/;
/** how long a question waits for its answer, and an answer for its use */
export const CHECK_APPROVAL_TTL_MS = 15 * 60_000;
/** questions held at once; the oldest is dropped first */
const MAX_PENDING = 256;

export type CheckApprovalState = "pending" | "approved" | "rejected";

export interface CheckApproval {
  id: string;
  workspace: string;
  argv: string[];
  /** the workspace's manifest digest when it was asked: an answer holds only for that workspace */
  digest: string;
  state: CheckApprovalState;
  reason: string | null;
  asked_at: number;
}

export interface CheckApprovals {
  ask(workspace: string, argv: readonly string[], digest: string): CheckApproval;
  get(id: string): CheckApproval;
  decide(id: string, decision: "approve" | "reject", reason?: string): CheckApproval;
  /** an approved answer for exactly this call, used up; otherwise a coded error saying why it does not hold */
  use(id: string, workspace: string, argv: readonly string[], digest: string): void;
}

export function createCheckApprovals(now: () => number = Date.now): CheckApprovals {
  const held = new Map<string, CheckApproval>();
  const expired = (a: CheckApproval) => now() - a.asked_at > CHECK_APPROVAL_TTL_MS;
  const find = (id: string): CheckApproval => {
    const a = CHECK_APPROVAL_ID.test(id) ? held.get(id) : undefined;
    if (!a || expired(a)) {
      if (a) held.delete(id);
      throw new MiniAgentError("approval_unknown", `no pending approval ${id} (unknown, used, or older than ${CHECK_APPROVAL_TTL_MS / 60_000} minutes)`);
    }
    return a;
  };
  return {
    ask(workspace, argv, digest) {
      for (const [id, a] of held) if (expired(a)) held.delete(id);
      while (held.size >= MAX_PENDING) held.delete(held.keys().next().value as string);
      const a: CheckApproval = {
        id: `chk_${crypto.randomBytes(10).toString("hex")}`,
        workspace,
        argv: [...argv],
        digest,
        state: "pending",
        reason: null,
        asked_at: now(),
      };
      held.set(a.id, a);
      return { ...a, argv: [...a.argv] };
    },
    get(id) {
      const a = find(id);
      return { ...a, argv: [...a.argv] };
    },
    decide(id, decision, reason) {
      const a = find(id);
      if (a.state !== "pending") throw new MiniAgentError("invalid_request", `approval ${id} was already ${a.state}`);
      a.state = decision === "approve" ? "approved" : "rejected";
      a.reason = reason ?? null;
      return { ...a, argv: [...a.argv] };
    },
    use(id, workspace, argv, digest) {
      const a = find(id);
      if (a.workspace !== workspace || canonicalJson(a.argv) !== canonicalJson(argv)) {
        throw new MiniAgentError("approval_stale", `approval ${id} was given for another command or workspace; ask again without approval_id`);
      }
      if (a.state === "pending")
        throw new MiniAgentError("approval_required", `approval ${id} is still waiting for a person`, { details: { approval_id: id } });
      if (a.state === "rejected") {
        held.delete(id);
        throw new MiniAgentError("approval_rejected", `a person refused it${a.reason ? `: ${a.reason}` : ""}; nothing ran`);
      }
      if (a.digest !== digest) {
        held.delete(id);
        throw new MiniAgentError("approval_stale", "the workspace changed after the approval was asked; ask again without approval_id");
      }
      held.delete(id);
    },
  };
}

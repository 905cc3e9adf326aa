import { buildModelView, type ModelViewWithCompaction } from "../context/model-view.js";
import { groupMessages, toolCallMessage, toolResultMessage, type ChatMessage } from "../context/messages.js";
import type { RunSummary } from "../context/summary.js";
import { toolDescriptions } from "../tools/descriptions.js";
import type { ModelView } from "../models/model.js";
import type { Ledger } from "../store/ledger.js";

/** What compaction left out this turn; the full payloads stay in the ledger. */
export interface CompactionFacts {
  dropped_groups: number;
  dropped_call_ids: string[];
  trimmed_call_ids: string[];
}

/** Builds the model's view of a run from the ledger alone (issue 4: rebuilt every turn). */
export type ViewBuilder = (ledger: Ledger, runId: string, workspaceDigest: string) => ModelView & { compaction?: CompactionFacts };

export const VIEW_DEFAULTS = { budgetBytes: 24_000 } as const;

export function ledgerMessages(ledger: Ledger, runId: string): ChatMessage[] {
  const toolNames = new Map<string, string>();
  const out: ChatMessage[] = [];
  for (const m of ledger.listMessages(runId)) {
    if (m.role === "assistant") {
      const d = m.decision;
      if (d.kind === "tool") {
        toolNames.set(d.call.call_id, d.call.name);
        out.push(toolCallMessage(d.call));
      } else out.push({ role: "assistant", content: d.kind === "plan" ? d.text : `final: ${d.text}` });
    } else {
      out.push(toolResultMessage(m.result, toolNames.get(m.result.call_id) ?? "unknown"));
    }
  }
  return out;
}

export function defaultViewBuilder(budgetBytes: number = VIEW_DEFAULTS.budgetBytes): ViewBuilder {
  // what a run is offered depends on its backend (run_command only with a container sandbox)
  const toolsByBackend = {
    container: toolDescriptions({ backend: "container" }) as unknown as Array<Record<string, unknown>>,
    trusted_local: toolDescriptions({ backend: "trusted_local" }) as unknown as Array<Record<string, unknown>>,
  };
  return (ledger, runId, workspaceDigest) => {
    const { compaction, ...view } = fullModelView(ledger, runId, workspaceDigest, budgetBytes, toolsByBackend);
    return {
      ...view,
      compaction: { dropped_groups: compaction.dropped_groups, dropped_call_ids: compaction.dropped_call_ids, trimmed_call_ids: compaction.trimmed_call_ids },
    };
  };
}

/**
 * The view with every fact of its compaction (bytes used, groups kept, whether
 * the last failure was pinned): the offline report records them; the runtime
 * keeps only what it traces.
 */
export function fullModelView(
  ledger: Ledger,
  runId: string,
  workspaceDigest: string,
  budgetBytes: number,
  toolsByBackend?: Record<"container" | "trusted_local", Array<Record<string, unknown>>>,
): ModelViewWithCompaction {
  const run = ledger.getRun(runId);
  const tools = toolsByBackend?.[run.record.backend] ?? (toolDescriptions({ backend: run.record.backend }) as unknown as Array<Record<string, unknown>>);
  const pending = run.state.pending_action_id ? ledger.findAction(runId, run.state.pending_action_id) : undefined;
  const summary: RunSummary = {
    goal: run.record.task.task,
    constraints: [
      `writable: ${run.record.task.writable.join(", ")}`,
      `creatable: ${run.record.task.creatable.join(", ") || "(none)"}`,
      `test presets: ${Object.keys(run.record.task.test_presets).join(", ")}`,
    ],
    status: run.status,
    reason: run.reason,
    workspace_digest: workspaceDigest,
    plan: run.state.last_plan,
    pending_action: pending ? { action_id: pending.record.action_id, tool: pending.record.tool, path: pending.record.path } : null,
    counters: { ...run.state.counters },
    verification: run.state.tests ? { last_tests: run.state.tests } : null,
  };
  const { groups } = groupMessages(ledgerMessages(ledger, runId));
  return buildModelView({ runId, summary, groups, budgetBytes, tools });
}

/**
 * The model view, rebuilt from the ledger every turn.
 *
 *   buildModelView(input: BuildModelViewInput): ModelViewWithCompaction
 *     input = { runId, summary: RunSummary, groups: MessageGroup[] (oldest first),
 *               budgetBytes, tools, size?: (messages) => number, payloadCapBytes? }
 *     -> { runId, messages, tools, compaction: CompactionReport }
 *
 * messages = [authoritative summary (system), history_compaction marker (system,
 * only when something was dropped or trimmed), kept groups in chronological order].
 * Rules (issue 4): a tool call and its result are kept or dropped together; the
 * most recent failure is kept first; huge payloads in kept groups are trimmed to
 * structure + call_id + error + key diagnostics; the budget counts bytes of the
 * serialized messages (pass `size` to plug in a tokenizer; tools are not counted
 * because they are constant per run and a provider may cache them).
 * Bad input throws MiniAgentError("invalid_request") and builds nothing.
 */
import { z } from "zod";
import type { ModelView } from "../models/model.js";
import { MiniAgentError } from "../errors.js";
import { describeZodError } from "../contracts/common.js";
import { ChatMessage, callIds, isCompleteGroup, isFailureGroup, type MessageGroup } from "./messages.js";
import { SUMMARY_LEVELS, summaryMessage, type RunSummary } from "./summary.js";
import { byteLength, trimGroup } from "./trim.js";

export const CONTEXT_DEFAULTS = {
  /** a single message above this share of the budget is trimmed even if it would fit */
  payloadCapFraction: 0.25,
  minPayloadCapBytes: 256,
  /** second, harsher trim tried before a group is dropped */
  hardCapBytes: 192,
  /** how many dropped call ids the marker names (the count is always exact) */
  markerCallIdsMax: 8,
  minBudgetBytes: 512,
} as const;

export type SizeFn = (messages: ChatMessage[]) => number;
export const jsonBytes: SizeFn = (messages) => byteLength(JSON.stringify(messages));

export interface BuildModelViewInput {
  runId: string;
  summary: RunSummary;
  groups: MessageGroup[];
  budgetBytes: number;
  tools: Array<Record<string, unknown>>;
  size?: SizeFn;
  payloadCapBytes?: number;
}

export interface CompactionReport {
  budget_bytes: number;
  used_bytes: number;
  summary_level: number;
  kept_groups: number;
  dropped_groups: number;
  dropped_call_ids: string[];
  trimmed_call_ids: string[];
  incomplete_dropped: number;
  pinned_failure: boolean;
  /** true only when even the bare summary at its tightest does not fit */
  over_budget: boolean;
}

export type ModelViewWithCompaction = ModelView & { compaction: CompactionReport };

const Input = z.strictObject({
  runId: z.string().min(1),
  summary: z.strictObject({
    goal: z.string(),
    constraints: z.array(z.string()),
    status: z.string().min(1),
    reason: z.string().nullable(),
    workspace_digest: z.string(),
    plan: z.string().nullable(),
    pending_action: z.strictObject({ action_id: z.string(), tool: z.string(), path: z.string().nullable() }).nullable(),
    counters: z.record(z.string(), z.number()),
    verification: z.record(z.string(), z.unknown()).nullable(),
  }),
  groups: z.array(z.strictObject({ messages: z.array(ChatMessage), failure: z.boolean().optional() })),
  budgetBytes: z.int().min(CONTEXT_DEFAULTS.minBudgetBytes),
  tools: z.array(z.record(z.string(), z.unknown())),
  size: z.custom<SizeFn>((v) => typeof v === "function").optional(),
  payloadCapBytes: z.int().min(64).optional(),
});

interface Kept {
  index: number;
  group: MessageGroup;
  trimmed: string[];
}

/** Plain text, not JSON: it is read by the model, and escaped quotes would cost budget. */
function markerMessage(dropped: MessageGroup[], trimmed: string[], incomplete: number): ChatMessage | null {
  if (dropped.length === 0 && trimmed.length === 0 && incomplete === 0) return null;
  const ids = dropped.flatMap((g) => callIds(g.messages).asked);
  const named = ids.slice(-CONTEXT_DEFAULTS.markerCallIdsMax);
  const more = ids.length - named.length;
  const parts = [`history_compaction: ${dropped.length} message group(s) dropped`];
  if (ids.length > 0) parts.push(`dropped calls: ${named.join(",")}${more > 0 ? ` (+${more} more)` : ""}`);
  if (trimmed.length > 0) parts.push(`payloads trimmed to structure, error and key diagnostics: ${trimmed.join(",")}`);
  if (incomplete > 0) parts.push(`${incomplete} unanswered call group(s) left out`);
  parts.push("the host ledger keeps everything; RUN_STATE is authoritative");
  return { role: "system", content: parts.join("; ") };
}

export function buildModelView(raw: BuildModelViewInput): ModelViewWithCompaction {
  const parsed = Input.safeParse(raw);
  if (!parsed.success) throw new MiniAgentError("invalid_request", `invalid model view input: ${describeZodError(parsed.error)}`);
  const input = parsed.data;
  const size = input.size ?? jsonBytes;
  const budget = input.budgetBytes;
  const payloadCap = input.payloadCapBytes ?? Math.max(CONTEXT_DEFAULTS.minPayloadCapBytes, Math.floor(budget * CONTEXT_DEFAULTS.payloadCapFraction));

  const complete: Array<{ index: number; group: MessageGroup }> = [];
  let incomplete = 0;
  input.groups.forEach((group, index) => {
    if (isCompleteGroup(group)) complete.push({ index, group });
    else incomplete += 1;
  });

  const render = (level: number, kept: Kept[]): { messages: ChatMessage[]; bytes: number } => {
    const keptIdx = new Set(kept.map((k) => k.index));
    const dropped = complete.filter((c) => !keptIdx.has(c.index)).map((c) => c.group);
    const ordered = [...kept].sort((a, b) => a.index - b.index);
    const marker = markerMessage(
      dropped,
      ordered.flatMap((k) => k.trimmed),
      incomplete,
    );
    const messages = [summaryMessage(input.summary, level), ...(marker ? [marker] : []), ...ordered.flatMap((k) => k.group.messages)];
    return { messages, bytes: size(messages) };
  };

  // Most recent failure first, then newest to oldest; recency stops at the
  // first group that does not fit so the kept history has no holes.
  const failure = [...complete].reverse().find((c) => isFailureGroup(c.group));
  const order = [...(failure ? [failure] : []), ...[...complete].reverse().filter((c) => c !== failure)];

  for (let level = 0; level < SUMMARY_LEVELS; level++) {
    const last = level === SUMMARY_LEVELS - 1;
    if (render(level, []).bytes > budget && !last) continue;
    const kept: Kept[] = [];
    for (const cand of order) {
      let fitted: Kept | null = null;
      for (const cap of [payloadCap, CONTEXT_DEFAULTS.hardCapBytes]) {
        const t = trimGroup(cand.group, cap);
        const attempt: Kept = { index: cand.index, group: t.group, trimmed: t.trimmedCallIds };
        if (render(level, [...kept, attempt]).bytes <= budget) {
          fitted = attempt;
          break;
        }
      }
      if (fitted) kept.push(fitted);
      else if (cand !== failure) break;
    }
    const pinned = failure !== undefined && kept.some((k) => k.index === failure.index);
    // the most recent failure outranks summary detail: squeeze the summary before losing it
    if (failure !== undefined && !pinned && !last) continue;
    const view = render(level, kept);
    const dropped = complete.filter((c) => !kept.some((k) => k.index === c.index));
    return {
      runId: input.runId,
      messages: view.messages as Array<Record<string, unknown>>,
      tools: input.tools,
      compaction: {
        budget_bytes: budget,
        used_bytes: view.bytes,
        summary_level: level,
        kept_groups: kept.length,
        dropped_groups: dropped.length,
        dropped_call_ids: dropped.flatMap((c) => callIds(c.group.messages).asked),
        trimmed_call_ids: kept.flatMap((k) => k.trimmed),
        incomplete_dropped: incomplete,
        pinned_failure: pinned,
        over_budget: view.bytes > budget,
      },
    };
  }
  // unreachable: the last level always returns
  throw new MiniAgentError("internal", "model view levels exhausted");
}

import { z } from "zod";
import type { ToolCall, ToolResult } from "../contracts/tool-call.js";

/**
 * OpenAI chat messages, because a live provider sends them as-is. A "group" is
 * the unit compaction keeps or drops: one assistant message plus the tool
 * results answering EVERY one of its tool_calls, or one plain message. A tool
 * call without its result (or the reverse) is rejected by providers, so a
 * group is never split.
 *
 *   toolCallMessage(call, text?)      -> assistant message with one tool_call
 *   toolResultMessage(result, name)   -> tool message, content marked untrusted
 *   groupMessages(messages)           -> { groups, incomplete }
 */
export const ChatToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.strictObject({ name: z.string().min(1), arguments: z.string() }),
});
export type ChatToolCall = z.infer<typeof ChatToolCall>;

export const ChatMessage = z.discriminatedUnion("role", [
  z.strictObject({ role: z.literal("system"), content: z.string() }),
  z.strictObject({ role: z.literal("user"), content: z.string() }),
  z.strictObject({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(ChatToolCall).min(1).optional(),
  }),
  z.strictObject({ role: z.literal("tool"), tool_call_id: z.string().min(1), content: z.string() }),
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

export interface MessageGroup {
  messages: ChatMessage[];
  /** set by the caller when it knows; otherwise inferred from the tool results (ok=false). */
  failure?: boolean;
}

/**
 * Workspace content is DATA written by whoever controls the repository. Every
 * tool result says so in-band, and the system message tells the model that
 * nothing inside such an envelope is an instruction.
 */
export const UNTRUSTED_MARK = "untrusted_workspace_data" as const;

export interface ToolEnvelope {
  [UNTRUSTED_MARK]: true;
  tool: string;
  call_id: string;
  ok: boolean;
  error: { code: string; message: string } | null;
  truncated: boolean;
  data: unknown;
  /** present only when compaction replaced `data` by its outline */
  trimmed?: { original_bytes: number };
}

export function toolCallMessage(call: ToolCall, text: string | null = null): ChatMessage {
  return {
    role: "assistant",
    content: text,
    tool_calls: [{ id: call.call_id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
  };
}

export function toolResultMessage(result: ToolResult, tool: string): ChatMessage {
  const envelope: ToolEnvelope = {
    [UNTRUSTED_MARK]: true,
    tool,
    call_id: result.call_id,
    ok: result.ok,
    error: result.error,
    truncated: result.truncated,
    data: result.data,
  };
  return { role: "tool", tool_call_id: result.call_id, content: JSON.stringify(envelope) };
}

/** Reads back our own envelope; null for foreign content (then it is treated as opaque text). */
export function readEnvelope(message: ChatMessage): ToolEnvelope | null {
  if (message.role !== "tool") return null;
  try {
    const parsed: unknown = JSON.parse(message.content);
    if (parsed && typeof parsed === "object" && (parsed as Record<string, unknown>)[UNTRUSTED_MARK] === true) {
      return parsed as ToolEnvelope;
    }
  } catch {
    // not ours: opaque text
  }
  return null;
}

export function isFailureGroup(group: MessageGroup): boolean {
  if (group.failure !== undefined) return group.failure;
  return group.messages.some((m) => readEnvelope(m)?.ok === false);
}

/** Tool call ids asked for by assistant messages and answered by tool messages, for pairing checks. */
export function callIds(messages: readonly ChatMessage[]): { asked: string[]; answered: string[] } {
  const asked: string[] = [];
  const answered: string[] = [];
  for (const m of messages) {
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) asked.push(c.id);
    if (m.role === "tool") answered.push(m.tool_call_id);
  }
  return { asked, answered };
}

/** A group is complete when its asked and answered call ids are the same set, each once. */
export function isCompleteGroup(group: MessageGroup): boolean {
  const { asked, answered } = callIds(group.messages);
  if (group.messages.length === 0) return false;
  if (new Set(asked).size !== asked.length || new Set(answered).size !== answered.length) return false;
  return asked.length === answered.length && asked.every((id) => answered.includes(id));
}

/**
 * Splits a flat ledger transcript into groups. An assistant message with
 * tool_calls opens a group that the following tool messages close; a group
 * whose calls are not all answered (e.g. the action awaiting approval) and
 * stray tool messages are returned as `incomplete`, never sent to a model.
 */
export function groupMessages(messages: readonly ChatMessage[]): { groups: MessageGroup[]; incomplete: ChatMessage[][] } {
  const groups: MessageGroup[] = [];
  const incomplete: ChatMessage[][] = [];
  let open: ChatMessage[] | null = null;
  const close = () => {
    if (open === null) return;
    const g = { messages: open };
    if (isCompleteGroup(g)) groups.push(g);
    else incomplete.push(open);
    open = null;
  };
  for (const m of messages) {
    if (m.role === "tool") {
      if (open === null) incomplete.push([m]);
      else open.push(m);
      continue;
    }
    close();
    if (m.role === "assistant" && m.tool_calls !== undefined) open = [m];
    else groups.push({ messages: [m] });
  }
  close();
  return { groups, incomplete };
}

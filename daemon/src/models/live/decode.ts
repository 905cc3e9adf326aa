import { createHash } from "node:crypto";
import { z } from "zod";
import { Id } from "../../contracts/common.js";
import { Decision } from "../../contracts/decision.js";
import type { WireMessage, WireToolCall } from "./wire.js";

/**
 * Turning what a model said into ONE Decision. A model's output is untrusted:
 * nothing here throws on bad output. Output that cannot be a valid decision
 * becomes a TOOL decision that the host's validator is certain to reject, so it
 * costs a tool call and the model sees a normal error observation on its next
 * turn (issue 6: "invalid output becomes an error observation that costs
 * budget, never a crash"). The Decision contract is used as it is; the runtime
 * needs no special case:
 * - arguments that are not a JSON object -> `{ [ARGUMENTS_NOT_JSON_KEY]: why }`
 *   under the model's own tool name: the strict argument schema answers
 *   `invalid_fields` (or `unknown_tool` if the name is unknown too);
 * - a reply that is no decision at all -> the tool INVALID_OUTPUT_TOOL, which is
 *   never a real tool, so the host answers `unknown_tool` with the reason in
 *   the call's arguments.
 */
export const ARGUMENTS_NOT_JSON_KEY = "arguments_not_a_json_object";
export const INVALID_OUTPUT_TOOL = "invalid_output";

/** A reply without a tool call that starts with this is the model's `final`; other text is a plan. */
export const FINAL_MARKER = /^\s*FINAL\b\s*:?\s*/i;

const MAX_TEXT = 8192;
const MAX_REASON = 1024;

export function invalidOutputDecision(callId: string, problem: string): Decision {
  return { kind: "tool", call: { call_id: callId, name: INVALID_OUTPUT_TOOL, arguments: { problem: cap(problem, MAX_REASON) } } };
}

/**
 * Provider call ids are kept when they are valid ids not used earlier in the
 * run; otherwise a stable one is derived from the turn. Some local servers
 * number calls per reply ("call_0" every turn), and a reused id would pair a
 * new call with an old result.
 */
export function callIdFor(raw: string | null | undefined, turnSeed: string, used: ReadonlySet<string> = new Set()): string {
  if (raw && Id.safeParse(raw).success && !used.has(raw)) return raw;
  return `call_${createHash("sha256")
    .update(`${turnSeed}\0${raw ?? ""}`)
    .digest("hex")
    .slice(0, 24)}`;
}

/** Native tool calling. Parallel calls are disabled in the request; if a provider sends several anyway only the first is taken. */
export function decodeToolMessage(message: WireMessage, turnSeed: string, usedIds: ReadonlySet<string> = new Set()): Decision {
  const call = message.tool_calls?.[0];
  if (call) return decodeToolCall(call, turnSeed, usedIds);
  return decodeText(message.content ?? "", turnSeed);
}

function decodeToolCall(call: WireToolCall, turnSeed: string, usedIds: ReadonlySet<string>): Decision {
  const callId = callIdFor(call.id, turnSeed, usedIds);
  const name = call.function.name.trim();
  if (name.length === 0 || name.length > 64) {
    return invalidOutputDecision(callId, "tool call without a valid tool name (1-64 characters)");
  }
  const args = parseArguments(call.function.arguments);
  const decision = { kind: "tool" as const, call: { call_id: callId, name, arguments: args } };
  const checked = Decision.safeParse(decision);
  return checked.success ? checked.data : invalidOutputDecision(callId, z.prettifyError(checked.error));
}

function parseArguments(raw: WireToolCall["function"]["arguments"]): Record<string, unknown> {
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== "string") return raw;
  // several servers send "" for a tool without parameters (show_diff)
  if (raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
    return { [ARGUMENTS_NOT_JSON_KEY]: `arguments must be a JSON object, got ${Array.isArray(value) ? "an array" : typeof value}` };
  } catch (err) {
    return { [ARGUMENTS_NOT_JSON_KEY]: cap(`arguments are not valid JSON: ${(err as Error).message}`, MAX_REASON) };
  }
}

function decodeText(content: string, turnSeed: string): Decision {
  const text = content.trim();
  if (text.length === 0) {
    return invalidOutputDecision(callIdFor(null, turnSeed), "empty reply: call a tool, or reply `FINAL: <summary>` when the tests pass");
  }
  if (FINAL_MARKER.test(text)) return { kind: "final", text: cap(text.replace(FINAL_MARKER, ""), MAX_TEXT) };
  return { kind: "plan", text: cap(text, MAX_TEXT) };
}

/**
 * JSON-action mode: the reply must be exactly one JSON object that is a Decision
 * (a ```json fence around it is tolerated). A tool call may omit call_id.
 */
export function decodeJsonAction(content: string, turnSeed: string, usedIds: ReadonlySet<string> = new Set()): Decision {
  const fallbackId = callIdFor(null, turnSeed);
  const text = unfence(content.trim());
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return invalidOutputDecision(fallbackId, `reply is not one JSON object: ${(err as Error).message}`);
  }
  if (isRecord(value) && value.kind === "tool" && isRecord(value.call)) {
    const call = value.call;
    value = { ...value, call: { ...call, call_id: callIdFor(typeof call.call_id === "string" ? call.call_id : null, turnSeed, usedIds) } };
  }
  const parsed = Decision.safeParse(value);
  if (parsed.success) return parsed.data;
  const callId = isRecord(value) && isRecord(value.call) && typeof value.call.call_id === "string" ? value.call.call_id : fallbackId;
  return invalidOutputDecision(callId, `reply is not a valid action: ${z.prettifyError(parsed.error)}`);
}

function unfence(text: string): string {
  const m = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(text);
  return m?.[1] ?? text;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

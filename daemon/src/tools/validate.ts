import { z } from "zod";
import { describeZodError } from "../contracts/common.js";
import { TOOL_ARGS, TOOL_NAMES, ToolCall, type ToolArgs, type ToolName, type ToolResult } from "../contracts/tool-call.js";
import { errorResult } from "./result.js";

export type ValidatedToolCall = {
  [N in ToolName]: { ok: true; call: ToolCall; name: N; args: ToolArgs<N> };
}[ToolName];

export type ValidationOutcome = ValidatedToolCall | { ok: false; result: ToolResult };

const CallIdOnly = z.looseObject({ call_id: ToolCall.shape.call_id });

function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as string[]).includes(name);
}

/**
 * The trust boundary for a proposed call: pure, no side effects. Unknown tool ->
 * unknown_tool; any extra, missing or mistyped field (top level or argument) ->
 * invalid_fields with the zod path. Returns a fresh copy, so later mutation of
 * the proposal cannot change what was checked.
 */
export function validateToolCall(raw: unknown): ValidationOutcome {
  const idProbe = CallIdOnly.safeParse(raw);
  const callId = idProbe.success ? idProbe.data.call_id : "invalid";
  const top = ToolCall.safeParse(raw);
  if (!top.success) {
    return { ok: false, result: errorResult(callId, "invalid_fields", describeZodError(top.error)) };
  }
  const { name } = top.data;
  if (!isToolName(name)) {
    return {
      ok: false,
      result: errorResult(callId, "unknown_tool", `unknown tool '${name.slice(0, 64)}'; available: ${TOOL_NAMES.join(", ")}`),
    };
  }
  // z.record copies keys by assignment, so an own "__proto__" key (JSON.parse makes
  // one) would vanish before the strict check; compare the RAW keys first
  const rawArgs = (raw as { arguments: object }).arguments;
  const allowed = Object.keys(TOOL_ARGS[name].shape);
  const extra = Object.keys(rawArgs).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    return {
      ok: false,
      result: errorResult(callId, "invalid_fields", `✖ Unrecognized key(s): ${extra.map((k) => JSON.stringify(k.slice(0, 64))).join(", ")}\n  → at arguments`),
    };
  }
  const args = TOOL_ARGS[name].safeParse(top.data.arguments);
  if (!args.success) {
    const prefixed = new z.ZodError(args.error.issues.map((i) => ({ ...i, path: ["arguments", ...i.path] })));
    return { ok: false, result: errorResult(callId, "invalid_fields", describeZodError(prefixed)) };
  }
  // zod builds new objects for strict objects; structuredClone makes the copy total
  const copy = structuredClone(args.data) as Record<string, unknown>;
  const call: ToolCall = { call_id: top.data.call_id, name, arguments: structuredClone(copy) };
  return { ok: true, call, name, args: copy } as ValidatedToolCall;
}

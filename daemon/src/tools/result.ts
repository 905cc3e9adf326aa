import type { ErrorCode } from "../errors.js";
import type { ToolResult } from "../contracts/tool-call.js";

/** The two shapes of a ToolResult, so no tool builds one by hand. */
export function okResult(callId: string, data: unknown, truncated = false): ToolResult {
  return { call_id: callId, ok: true, data, error: null, truncated };
}

export function errorResult(callId: string, code: ErrorCode, message: string, data: unknown = null, truncated = false): ToolResult {
  return { call_id: callId, ok: false, data, error: { code, message: message.slice(0, 2048) }, truncated };
}

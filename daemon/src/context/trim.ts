import { readEnvelope, type ChatMessage, type MessageGroup, type ToolEnvelope } from "./messages.js";

/**
 * Trims a huge payload inside a group the view keeps: what remains is the
 * payload's structure, its call_id, its error and the key diagnostics. The
 * full payload stays in the ledger; the note says so, so the model can ask for
 * a narrower read instead of guessing.
 */
const SCALAR_MAX = 160;
const DIAGNOSTIC_LINES = 6;
const DIAGNOSTIC_HINT = /not ok|error|assert|expected|actual|fail|timed out|cancel/i;

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Shape of a value without its bulk: key -> type (and length for strings/arrays). */
function structure(value: unknown, depth = 0): unknown {
  if (value === null) return null;
  if (typeof value === "string") return value.length <= 48 ? value : `string(${value.length})`;
  if (typeof value !== "object") return value;
  if (Array.isArray(value)) return `array(${value.length})`;
  if (depth >= 1) return `object(${Object.keys(value).length} keys)`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = structure(v, depth + 1);
  return out;
}

function diagnostics(value: unknown, max: number, found: string[] = []): string[] {
  if (found.length >= max) return found;
  if (typeof value === "string") {
    for (const line of value.split("\n")) {
      if (found.length >= max) break;
      if (DIAGNOSTIC_HINT.test(line)) found.push(line.trim().slice(0, SCALAR_MAX));
    }
  } else if (value && typeof value === "object") {
    for (const v of Object.values(value)) diagnostics(v, max, found);
  }
  return found;
}

function trimEnvelope(env: ToolEnvelope, originalBytes: number, cap: number): ToolEnvelope {
  // a harsher cap keeps fewer diagnostic lines; the first ones name the failure
  const diag = diagnostics(env.data, cap >= 256 ? DIAGNOSTIC_LINES : 3);
  return {
    ...env,
    error: env.error === null ? null : { code: env.error.code, message: env.error.message.slice(0, cap >= 256 ? 400 : 160) },
    data: { structure: structure(env.data), key_diagnostics: diag },
    trimmed: { original_bytes: originalBytes },
  };
}

function clipText(text: string, cap: number): string {
  if (byteLength(text) <= cap) return text;
  const keep = Math.max(0, Math.floor(cap / 2));
  return `${text.slice(0, keep)} ...[${byteLength(text) - keep} bytes trimmed; full text in the host ledger]`;
}

/** Long string arguments (patch bodies) become a length marker; path, version and names stay. */
function trimArguments(args: string, cap: number): string {
  if (byteLength(args) <= cap) return args;
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(parsed)) {
        out[k] = typeof v === "string" && v.length > SCALAR_MAX ? `[trimmed: ${byteLength(v)} bytes in the host ledger]` : v;
      }
      return JSON.stringify(out);
    }
  } catch {
    // not JSON: fall through to an opaque marker that is still valid JSON
  }
  return JSON.stringify({ trimmed_bytes: byteLength(args) });
}

function trimMessage(m: ChatMessage, cap: number): { message: ChatMessage; trimmed: boolean } {
  switch (m.role) {
    case "tool": {
      const size = byteLength(m.content);
      if (size <= cap) return { message: m, trimmed: false };
      const env = readEnvelope(m);
      const content = env === null ? clipText(m.content, cap) : JSON.stringify(trimEnvelope(env, size, cap));
      return { message: { ...m, content }, trimmed: true };
    }
    case "assistant": {
      let trimmed = false;
      const content = m.content === null ? null : clipText(m.content, cap);
      if (content !== m.content) trimmed = true;
      const tool_calls = m.tool_calls?.map((c) => {
        const args = trimArguments(c.function.arguments, cap);
        if (args !== c.function.arguments) trimmed = true;
        return { ...c, function: { ...c.function, arguments: args } };
      });
      const message: ChatMessage = tool_calls === undefined ? { role: "assistant", content } : { role: "assistant", content, tool_calls };
      return { message, trimmed };
    }
    default: {
      const content = clipText(m.content, cap);
      return { message: { ...m, content }, trimmed: content !== m.content };
    }
  }
}

/** Returns the group with every message over `capBytes` trimmed, and which call ids were touched. */
export function trimGroup(group: MessageGroup, capBytes: number): { group: MessageGroup; trimmedCallIds: string[]; changed: boolean } {
  const trimmedCallIds: string[] = [];
  let changed = false;
  const messages = group.messages.map((m) => {
    const r = trimMessage(m, capBytes);
    if (r.trimmed) {
      changed = true;
      if (m.role === "tool") trimmedCallIds.push(m.tool_call_id);
      if (m.role === "assistant") for (const c of m.tool_calls ?? []) trimmedCallIds.push(c.id);
    }
    return r.message;
  });
  return { group: { ...group, messages }, trimmedCallIds, changed };
}

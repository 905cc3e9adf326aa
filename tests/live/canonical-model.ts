import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { textReply, toolCallReply, type RecordedRequest, type Reply } from "./openai-server.js";

/**
 * The model's side of the canonical linkcheck fix, for a scripted
 * OpenAI-compatible server. It answers from what it is SENT: the apply_patch of
 * the fix quotes the SHA-256 version that read_file returned.
 */
const LINKCHECK = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/linkcheck");
const BUG = "    const resolved = path.join(rootDir, file);";
const FIX = "    const resolved = path.join(path.dirname(docAbs), file);";
const REPLAY = JSON.parse(fs.readFileSync(path.join(LINKCHECK, "replay.json"), "utf8")) as {
  decisions: Array<{ kind: string; call?: { name: string; arguments: Record<string, unknown> } }>;
};
const NEW_TEST = REPLAY.decisions.find((d) => d.call?.name === "apply_patch" && d.call.arguments.version === "absent")!.call!.arguments;

export type Msg = {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
};
export type Envelope = { tool: string; call_id: string; ok: boolean; error: { code: string } | null; data: Record<string, unknown> };

/** the tool results the request carries, in order */
export function envelopes(req: RecordedRequest): Envelope[] {
  return (req.body.messages as Msg[]).filter((m) => m.role === "tool").map((m) => JSON.parse(m.content ?? "{}") as Envelope);
}

export function canonicalModel(req: RecordedRequest): Reply {
  const messages = req.body.messages as Msg[];
  if (!messages.some((m) => m.role === "assistant")) return textReply("Plan: read the checker, add a nested-link test, see it fail, fix, see it pass.");
  const seen = envelopes(req);
  switch (seen.length) {
    case 0:
      return toolCallReply("read_file", { path: "src/linkcheck.js" }, "call_read");
    case 1:
      return toolCallReply("apply_patch", NEW_TEST, "call_add_test");
    case 2:
      return toolCallReply("run_tests", { preset: "candidate" }, "call_red");
    case 3: {
      const read = seen.find((e) => e.tool === "read_file")!;
      return toolCallReply("apply_patch", { path: "src/linkcheck.js", version: read.data.version, old: BUG, new: FIX }, "call_fix");
    }
    case 4:
      return toolCallReply("run_tests", { preset: "candidate" }, "call_green");
    default:
      return textReply("FINAL: relative links now resolve from the document's directory; 3 of 3 tests pass.");
  }
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { isCanonicalReplay, loadReplayFile, ReplayModel } from "./replay.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-replay-"));
function write(name: string, body: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof body === "string" ? body : JSON.stringify(body));
  return f;
}
function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return isMiniAgentError(err) ? err.code : "other";
  }
  return "no error";
}
const view = { runId: "r", messages: [], tools: [] };

describe("replay model", () => {
  it("plays decisions at the cursor it is given, so a resumed run continues where the ledger says", async () => {
    const file = loadReplayFile(
      write("ok.json", {
        schema_version: 1,
        decisions: [
          { kind: "plan", text: "a" },
          { kind: "final", text: "b" },
        ],
      }),
    );
    let cursor = 0;
    const m = new ReplayModel(file, () => cursor);
    expect((await m.decide(view, new AbortController().signal)).decision).toEqual({ kind: "plan", text: "a" });
    cursor = 1;
    expect((await m.decide(view, new AbortController().signal)).decision).toEqual({ kind: "final", text: "b" });
    cursor = 2;
    await expect(m.decide(view, new AbortController().signal)).rejects.toMatchObject({ code: "model_error", details: { transient: false } });
  });

  it("refuses malformed replays with invalid_replay and the zod path", () => {
    expect(codeOf(() => loadReplayFile(write("bad.json", "{not json")))).toBe("invalid_replay");
    expect(codeOf(() => loadReplayFile(path.join(dir, "missing.json")))).toBe("invalid_replay");
    const extra = write("extra.json", { schema_version: 1, decisions: [{ kind: "final", text: "x", extra: 1 }] });
    expect(codeOf(() => loadReplayFile(extra))).toBe("invalid_replay");
    expect(() => loadReplayFile(extra)).toThrow(/decisions\[0\]/);
  });

  it("trusts only a built-in fixture's own replay.json", () => {
    const builtin = path.join(dir, "fixtures");
    const fx = path.join(builtin, "demo");
    fs.mkdirSync(fx, { recursive: true });
    fs.writeFileSync(path.join(fx, "replay.json"), "{}");
    fs.writeFileSync(path.join(fx, "other.json"), "{}");
    expect(isCanonicalReplay(path.join(fx, "replay.json"), fx, builtin)).toBe(true);
    expect(isCanonicalReplay(path.join(fx, "other.json"), fx, builtin)).toBe(false);
    expect(isCanonicalReplay(path.join(fx, "replay.json"), fx, path.join(dir, "elsewhere"))).toBe(false);
    expect(isCanonicalReplay(path.join(fx, "replay.json"), undefined, builtin)).toBe(false);
  });
});

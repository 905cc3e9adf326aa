import { describe, expect, it } from "vitest";
import { parseTraceFile } from "./trace-file.js";

const line = (seq: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ seq, at: 1000 + seq, type: "plan_recorded", call_id: null, action_id: null, payload: { text: "é plan" }, ...extra });

describe("parseTraceFile", () => {
  it("returns every event of a clean file and no torn line", () => {
    const text = `${line(1)}\n${line(2, { content: { kind: "model_text", text: "x", bytes: 1, truncated: false } })}\n`;
    const parsed = parseTraceFile(text);
    expect(parsed.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(parsed.torn).toEqual([]);
    expect(parseTraceFile("")).toEqual({ events: [], torn: [] });
  });

  it("regression: a last line cut at ANY byte is reported as torn and never parsed as an event", () => {
    const first = `${line(1)}\n`;
    const last = Buffer.from(line(2));
    for (let k = 1; k <= last.length; k++) {
      const cut = first + last.subarray(0, k).toString("utf8");
      const parsed = parseTraceFile(cut);
      expect(parsed.events.map((e) => e.seq)).toEqual([1]);
      expect(parsed.torn).toHaveLength(1);
      expect(parsed.torn[0]).toMatchObject({ line: 2, why: "no_newline" });
    }
  });

  it("regression: a terminated fragment in the middle (a crash, then a restart) is reported, not thrown, and the lines after it are kept", () => {
    const text = `${line(1)}\n${line(2).slice(0, 20)}\n${line(3)}\n{"seq":4}\n`;
    const parsed = parseTraceFile(text);
    expect(parsed.events.map((e) => e.seq)).toEqual([1, 3]);
    expect(parsed.torn).toEqual([
      { line: 2, bytes: 20, why: "invalid" },
      { line: 4, bytes: 9, why: "invalid" },
    ]);
  });

  it("refuses a line with an unknown field (the contract is strict)", () => {
    const parsed = parseTraceFile(`${line(1, { extra: true })}\n`);
    expect(parsed.events).toEqual([]);
    expect(parsed.torn).toEqual([{ line: 1, bytes: Buffer.byteLength(line(1, { extra: true })), why: "invalid" }]);
  });
});

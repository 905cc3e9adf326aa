import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, runLogger } from "./logger.js";

function sink() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      const s = String(chunk);
      raw.push(s);
      for (const l of s.split("\n").filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { stream, lines, raw };
}

describe("daemon logger", () => {
  it("redacts credential-looking fields at any depth and key-like values in free text", () => {
    const s = sink();
    const log = createLogger({ level: "info", destination: s.stream, knownSecrets: () => ["tok-123456789"] });
    log.info(
      {
        headers: { authorization: "Bearer abcdefghijkl" },
        provider: { config: { apiKey: "sk-AAAAAAAAAAAAAAAAAAAA", deep: { password: "p4ss" } } },
        note: "sent tok-123456789 and sk-BBBBBBBBBBBBBBBBBBBB",
      },
      "message with Bearer zzzzzzzzzzzzzz inside",
    );
    const text = s.raw.join("");
    for (const leaked of ["abcdefghijkl", "sk-AAAA", "p4ss", "tok-123456789", "sk-BBBB", "zzzzzzzzzzzzzz"]) expect(text).not.toContain(leaked);
    expect(s.lines[0]?.level).toBe(30);
  });

  it("keeps the run id on every line of a run's child logger and errors under err", () => {
    const s = sink();
    const log = runLogger(createLogger({ level: "debug", destination: s.stream }), "run-7");
    log.error({ err: new Error("api_key=sk-CCCCCCCCCCCCCCCCCCCC failed") }, "boom");
    expect(s.lines[0]?.runId).toBe("run-7");
    expect(JSON.stringify(s.lines[0]?.err)).not.toContain("sk-CCCC");
  });

  it("respects the configured level", () => {
    const s = sink();
    createLogger({ level: "warn", destination: s.stream }).info("hidden");
    expect(s.lines).toEqual([]);
  });
});

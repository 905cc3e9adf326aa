import { describe, expect, it } from "vitest";
import { colorEnabled, renderDiff } from "./color.js";

const DIFF = "--- a/src/a.js\n+++ b/src/a.js\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n";

describe("diffs on a terminal", () => {
  it("colours added, removed, hunk and header lines when colour is on", () => {
    const out = renderDiff(DIFF, { color: true, terminal: true });
    expect(out.split("\n")).toEqual([
      "\x1b[1m--- a/src/a.js\x1b[0m",
      "\x1b[1m+++ b/src/a.js\x1b[0m",
      "\x1b[36m@@ -1,2 +1,2 @@\x1b[0m",
      " keep",
      "\x1b[31m-old\x1b[0m",
      "\x1b[32m+new\x1b[0m",
      "",
    ]);
  });

  it("is byte for byte the daemon's diff through a pipe", () => {
    const raw = DIFF + "+\x1b[2Jtext\r\n";
    expect(renderDiff(raw, { color: false, terminal: false })).toBe(raw);
  });

  it("on a terminal a patch's escape sequences are shown, not obeyed, with or without colour", () => {
    const evil = "+ok\n+\x1b[1A\x1b[2K\rlooks harmless\x07\n";
    for (const color of [true, false]) {
      const out = renderDiff(evil, { color, terminal: true });
      expect(out).toContain("\\x1b[1A\\x1b[2K\\x0dlooks harmless\\x07");
      expect(out.replace(/\x1b\[(?:0|1|31|32|36)m/g, "")).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    }
  });
});

describe("when to colour", () => {
  it("on a terminal by default", () => {
    expect(colorEnabled({}, true)).toBe(true);
  });
  it("never through a pipe or into a file", () => {
    expect(colorEnabled({}, false)).toBe(false);
  });
  it("never when NO_COLOR is set, whatever its value", () => {
    for (const v of ["1", "0", "", "false"]) expect(colorEnabled({ NO_COLOR: v }, true)).toBe(false);
    expect(colorEnabled({ NO_COLOR: "1", FORCE_COLOR: "1" }, true)).toBe(false);
  });
  it("FORCE_COLOR asks for colour through a pipe; FORCE_COLOR=0 turns it off", () => {
    expect(colorEnabled({ FORCE_COLOR: "1" }, false)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "0" }, true)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { didYouMean, parseCli } from "./cli-args.js";

const OPTS = {
  workspace: { type: "string" },
  "state-dir": { type: "string" },
  json: { type: "boolean" },
  writable: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

describe("parseCli: usage errors a person can act on", () => {
  it.each([
    [["--workspce", "/tmp"], "unknown option --workspce (did you mean --workspace?)"],
    [["--stat-dir", "x"], "unknown option --stat-dir (did you mean --state-dir?)"],
    [["--colour"], "unknown option --colour"],
    [["-x"], "unknown option -x"],
    [["--workspace"], "--workspace needs a value"],
    [["--workspace", "--json"], "--workspace needs a value (one that starts with '-' is written --workspace=--json)"],
    [["--json=yes"], "--json takes no value (got 'yes')"],
  ])("%j -> %s", (argv, message) => {
    expect(parseCli(argv, OPTS)).toEqual({ ok: false, message });
  });

  it("refuses a positional where none is allowed, naming it", () => {
    expect(parseCli(["stray"], OPTS, false)).toEqual({ ok: false, message: "unexpected argument 'stray'" });
  });

  it("parses what is right, =values, repeated options, -h and everything after --", () => {
    const r = parseCli(["--workspace=/w", "--writable", "a/**", "--writable", "b", "-h", "pos", "--", "--not-an-option"], OPTS);
    expect(r).toEqual({ ok: true, values: { workspace: "/w", writable: ["a/**", "b"], help: true }, positionals: ["pos", "--not-an-option"] });
  });
});

describe("didYouMean", () => {
  it("suggests the one near word: a typo, a swapped pair, a unique prefix", () => {
    expect(didYouMean("stauts", ["status", "list", "run"])).toBe("status");
    expect(didYouMean("concurency", ["concurrency", "queue"])).toBe("concurrency");
    expect(didYouMean("work", ["workspace", "writable"])).toBe("workspace");
  });
  it("suggests nothing when nothing is near or two words tie", () => {
    expect(didYouMean("frobnicate", ["status", "list"])).toBeNull();
    expect(didYouMean("ab", ["ac", "ad"])).toBeNull();
  });
});

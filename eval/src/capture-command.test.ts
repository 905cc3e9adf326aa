import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvalIO } from "./command.js";
import { evalMain } from "./cli.js";

function io(): EvalIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    env: { MINI_AGENT_STATE_DIR: "/nonexistent/ma-capture-usage" },
    cwd: "/tmp",
    stderrIsTTY: false,
    stdoutIsTTY: false,
    clock: { now: () => 0 } as EvalIO["clock"],
    out: (s) => void stdout.push(s),
    err: (s) => void stderr.push(s),
    stdout,
    stderr,
  };
}

describe("eval capture: its grammar (bad input is a usage error that changes nothing)", () => {
  it.each([
    [["capture"], "RUN is required"],
    [["capture", "run_1"], "--out DIR is required"],
    [["capture", "run_1", "run_2", "--out", "x"], "one RUN only"],
    [["capture", "run_1", "--out", "x", "--bogus"], "--bogus"],
  ])("%j exits 64 naming the problem", async (argv, said) => {
    const i = io();
    expect(await evalMain("eval", argv, i)).toBe(64);
    expect(i.stderr.join("")).toContain(said);
    // one line and where the help is: not the whole usage after Node's own message
    expect(i.stderr.join("")).toMatch(/^mini-agent-client eval capture: [^\n]+\nrun `mini-agent-client eval capture --help` for more\n$/);
  });

  it.each([
    ["eval", ["rnu", "x"], /^mini-agent-client eval: unknown subcommand 'rnu' \(did you mean run\?\)/],
    ["eval", [], /^mini-agent-client eval: name a subcommand: capture, run, metrics/],
    ["eval", ["metrics", "--jsn"], /^mini-agent-client eval metrics: unknown option --jsn \(did you mean --json\?\)/],
    ["eval", ["run", "suite", "--outptu", "o"], /^mini-agent-client eval run: unknown option --outptu \(did you mean --output\?\)/],
    ["gate", ["--reprot", "r.json"], /^mini-agent-client gate: unknown option --reprot \(did you mean --report\?\)/],
    ["eval", ["cancel", "--queue"], /^mini-agent-client eval cancel: --queue needs a value/],
  ] as const)(
    "regression: %s %j is one usage line with a did-you-mean, then where the help is (it printed Node's message and the whole usage)",
    async (top, argv, said) => {
      const i = io();
      expect(await evalMain(top, [...argv], i)).toBe(64);
      const text = i.stderr.join("");
      expect(text).toMatch(said);
      expect(text.trimEnd().split("\n")).toHaveLength(2);
      expect(text).toMatch(/\nrun `mini-agent-client (eval|gate)[^`]* --help` for more\n$/);
    },
  );

  it("--help prints the usage and exits 0", async () => {
    const i = io();
    expect(await evalMain("eval", ["capture", "--help"], i)).toBe(0);
    expect(i.stdout.join("")).toContain("Edit expect.json");
  });

  it("no daemon: daemon_unreachable with its code, no stack", async () => {
    const i = io();
    const code = await evalMain("eval", ["capture", "run_1", "--out", "case"], i);
    expect(code).toBe(2);
    expect(i.stderr.join("")).toContain("daemon_unreachable");
    expect(i.stderr.join("")).not.toMatch(/\n\s+at /);
  });
});

describe("what eval prints of a case folder's name", () => {
  it("regression: eval run's refusal of a case folder named with ESC, an OSC title, BEL, CR, newline and U+202E shows the name escaped (it was printed raw)", async () => {
    const suite = fs.mkdtempSync(path.join(os.tmpdir(), "ma-eval-names-"));
    try {
      const name = "c\u001b[2J\u001b]0;pwned\u0007\rx\ny\u202eevil";
      fs.mkdirSync(path.join(suite, name));
      fs.writeFileSync(path.join(suite, name, "expect.json"), "{}");
      const i = io();
      expect(await evalMain("eval", ["run", suite, "--output", path.join(suite, "out")], i)).toBe(1);
      const err = i.stderr.join("");
      expect(err).toContain("case_invalid");
      expect(err).toContain("c\\x1b[2J\\x1b]0;pwned\\x07\\x0dx\\x0ay\\u202eevil");
      expect(err).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    } finally {
      fs.rmSync(suite, { recursive: true, force: true });
    }
  });
});

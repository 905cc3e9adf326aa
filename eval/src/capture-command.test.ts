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
    expect(i.stderr.join("")).toContain("usage: mini-agent-client eval capture RUN --out DIR");
  });

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

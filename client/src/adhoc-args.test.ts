import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { main, type ClientIO } from "./main.js";
import { exitForError } from "../../client-lib/index.js";

/** a socket nobody listens on: a usage error must be decided before any request */
const NO_DAEMON = path.join(os.tmpdir(), `ma-adhoc-args-${process.pid}.sock`);

async function run(args: string[]) {
  const err: string[] = [];
  const io: ClientIO = {
    env: {},
    cwd: os.tmpdir(),
    isTTY: false,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    clock: { now: () => 0, every: () => () => {} },
    out: () => {},
    err: (s) => err.push(s),
    ask: async () => "",
  };
  const code = await main(["run", ...args, "--socket", NO_DAEMON], io);
  return { code, err: err.join("") };
}

describe("run --goal: command-line mistakes are usage errors (64) before any request", () => {
  it.each([
    [["--workspace", "/tmp/x", "--test", "pytest"], /--test belongs to an ad-hoc run/],
    [["--workspace", "/tmp/x", "--fixture", "f", "--protect", "a/**"], /--protect belongs to an ad-hoc run/],
    [["--workspace", "/tmp/x", "--goal", "  "], /--goal is empty/],
    [["--workspace", "/tmp/x", "--goal", "g", "--fixture", "fixtures/linkcheck"], /do not combine it with --fixture/],
    [["--goal", "g"], /run needs --workspace DIR/],
  ])("%j", async (args, why) => {
    const r = await run(args);
    expect(r).toMatchObject({ code: 64, err: expect.stringMatching(why) });
    expect(r.err).not.toMatch(/daemon_unreachable/);
  });

  it("the daemon's refusals of an ad-hoc run's input map to exit 64, other refusals do not", () => {
    for (const code of ["invalid_workspace", "invalid_test_command", "test_command_not_found", "invalid_glob", "unknown_image_family"] as const) {
      expect(exitForError(code), code).toBe(64);
    }
    expect(exitForError("invalid_request")).toBe(1);
    expect(exitForError("isolation_unverified")).toBe(2);
  });
});

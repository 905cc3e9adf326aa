import { describe, expect, it } from "vitest";
import { parseRunArgs } from "./run-args.js";

describe("eval run arguments", () => {
  it("defaults: replay, concurrency 1, the daemon's runtime, profile eval", () => {
    const r = parseRunArgs(["evals", "--output", "out"], "/cwd");
    expect(r).toEqual({
      ok: true,
      opts: {
        suiteDirs: ["/cwd/evals"],
        output: "/cwd/out",
        model: "replay",
        concurrency: 1,
        runtime: undefined,
        profile: "eval",
        rerun: false,
        json: false,
        socket: undefined,
        stateDir: undefined,
      },
    });
  });

  it("every option", () => {
    const r = parseRunArgs(
      ["a", "/b", "--output", "/o", "--model", "live", "--concurrency", "16", "--runtime", "runsc", "--policy-profile", "ci", "--rerun", "--json"],
      "/c",
    );
    expect(r).toMatchObject({
      ok: true,
      opts: { suiteDirs: ["/c/a", "/b"], model: "live", concurrency: 16, runtime: "runsc", profile: "ci", rerun: true, json: true },
    });
  });

  it.each([
    [["evals"], /--output/],
    [["--output", "o"], /SUITE_DIR/],
    [["e", "--output", "o", "--concurrency", "0"], /1 to 16/],
    [["e", "--output", "o", "--concurrency", "17"], /1 to 16/],
    [["e", "--output", "o", "--concurrency", "1.5"], /1 to 16/],
    [["e", "--output", "o", "--model", "gpt"], /replay or live/],
    [["e", "--output", "o", "--runtime", "kata"], /runc or runsc/],
    [["e", "--output", "o", "--policy-profile", "yolo"], /interactive, ci or eval/],
    [["e", "--output", "o", "--frobnicate"], /frobnicate/],
  ])("refuses %j", (argv, msg) => {
    const r = parseRunArgs(argv, "/c");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(msg);
  });
});

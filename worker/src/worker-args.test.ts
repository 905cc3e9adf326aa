import { describe, expect, it } from "vitest";
import { parseWorkerArgs } from "./worker-args.js";

const base = ["--queue", "redis://:pw@127.0.0.1:6390/0", "--state-dir", "w1"];

describe("mini-agent-worker arguments", () => {
  it("defaults: every family, runc, concurrency 1, HOSTNAME-PID id, BullMQ's 30 s lock and stall check", () => {
    const p = parseWorkerArgs(base, "/srv", 42);
    expect(p.kind).toBe("ok");
    if (p.kind !== "ok") return;
    expect(p.opts).toMatchObject({
      stateDir: "/srv/w1",
      families: ["node", "python", "go"],
      runtime: "runc",
      concurrency: 1,
      lockDurationMs: 30000,
      stalledIntervalMs: 30000,
    });
    expect(p.opts.workerId).toMatch(/-42$/);
  });

  it("takes a family list and short lock/stall times (the tests' SIGKILL hand-over)", () => {
    const p = parseWorkerArgs(
      [...base, "--families", "python,go", "--lock-duration-ms", "4000", "--stalled-interval-ms", "2000", "--concurrency", "2"],
      "/",
      1,
    );
    expect(p).toMatchObject({ kind: "ok", opts: { families: ["python", "go"], lockDurationMs: 4000, stalledIntervalMs: 2000, concurrency: 2 } });
  });

  it("takes --queue-password-file, resolved against the working folder", () => {
    const p = parseWorkerArgs(["--queue", "redis://127.0.0.1:6390/0", "--state-dir", "w1", "--queue-password-file", "pw"], "/srv", 1);
    expect(p).toMatchObject({ kind: "ok", opts: { queue: "redis://127.0.0.1:6390/0", queuePasswordFile: "/srv/pw" } });
  });

  it.each([
    [["--state-dir", "w"], "--queue URL is required"],
    [["--queue", "redis://h:1/0"], "--state-dir DIR is required"],
    [[...base, "--families", "node,rust"], "unknown: rust"],
    [[...base, "--concurrency", "0"], "--concurrency must be"],
    [[...base, "--runtime", "kata"], "--runtime must be runc or runsc"],
    [[...base, "--lock-duration-ms", "5"], "--lock-duration-ms must be"],
    [[...base, "--worker-id", "a b"], "--worker-id takes"],
    [[...base, "--bogus"], "unknown option --bogus"],
    [[...base, "--concurency", "2"], "unknown option --concurency (did you mean --concurrency?)"],
    [["--queue"], "--queue needs a value"],
  ])("refuses %j as a usage error naming the problem", (argv, why) => {
    const p = parseWorkerArgs(argv, "/", 1);
    expect(p.kind).toBe("usage_error");
    if (p.kind === "usage_error") expect(p.message).toContain(why);
  });

  it("regression: a custom family pinned in the state dir's image lock was refused (only node, python, go); it is taken, it is in the default, and an unknown name is refused naming the known ones", () => {
    const known = (dir: string) => (dir === "/srv/w1" ? ["node", "python", "go", "greet"] : ["node", "python", "go"]);
    expect(parseWorkerArgs([...base, "--families", "greet,node"], "/srv", 1, known)).toMatchObject({ kind: "ok", opts: { families: ["greet", "node"] } });
    expect(parseWorkerArgs(base, "/srv", 1, known)).toMatchObject({ kind: "ok", opts: { families: ["node", "python", "go", "greet"] } });
    const refused = parseWorkerArgs([...base, "--families", "greet,rust"], "/srv", 1, known);
    expect(refused).toMatchObject({ kind: "usage_error", message: expect.stringContaining("--families takes a list of node, python, go, greet") });
    if (refused.kind === "usage_error") expect(refused.message).toMatch(/unknown: rust$/);
    // another state dir's lock pins no greet
    expect(parseWorkerArgs(["--queue", "redis://h:1/0", "--state-dir", "w2", "--families", "greet"], "/srv", 1, known)).toMatchObject({
      kind: "usage_error",
      message: expect.stringContaining("unknown: greet"),
    });
  });
});

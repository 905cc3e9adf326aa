import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ToolResult } from "../../daemon/src/contracts/tool-call.js";
import type { BuiltinFamily } from "../../daemon/src/contracts/sandbox.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { driveReplay, fixtureAcceptance, stepData as data } from "../../daemon/src/tools/replay-driver.testkit.js";
import { workspaceDiff } from "../../daemon/src/tools/show-diff.js";
import { fixtureRun, type TempRun } from "../../daemon/src/tools/workspace.testkit.js";
import { captureBaseline } from "../../daemon/src/workspace/baseline.js";
import { sha256Hex } from "../../daemon/src/workspace/hash.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * The python and go fixtures' replays kept in step with their repos, like
 * daemon/src/tools/fixture-replays.test.ts does for linkcheck, but in the real
 * family images: the JUnit report pytest writes is read back from the sandbox
 * (a host process has no such sandbox), and go test runs with the image's Go.
 * Every patch's `version` must be the SHA-256 of the shipped file.
 */
const docker = createDockerClient(process.env);
let lockDir: string;
const executors = {} as Record<Exclude<BuiltinFamily, "node">, DockerExecutor>;
let run: (TempRun & { fixtureDir: string }) | undefined;

beforeAll(async () => {
  lockDir = await fs.mkdtemp(path.join(os.tmpdir(), "ma-family-replays-"));
  const lockPath = path.join(lockDir, "sandbox-image.lock.json");
  for (const family of ["python", "go"] as const) {
    await pinTestImage(lockPath, family, docker);
    executors[family] = new DockerExecutor({ lockPath, docker, config: { imageFamily: family } });
  }
}, 900_000);
afterEach(async () => run?.cleanup());
afterAll(async () => fs.rm(lockDir, { recursive: true, force: true }));

/** The shipped file's SHA-256 is what read_file returns, so a replay's `version` must equal it. */
async function expectVersionOfShipped(fixtureDir: string, replayFile: string, decision: number, rel: string): Promise<void> {
  const replay = JSON.parse(await fs.readFile(path.join(fixtureDir, replayFile), "utf8"));
  expect(replay.decisions[decision].call.arguments.version, `${replayFile} #${decision}`).toBe(
    sha256Hex(await fs.readFile(path.join(fixtureDir, "repo", rel))),
  );
}

const counts = (s: { result?: { data: unknown } }) => [data(s).discovered, data(s).passed, data(s).failed];

describe("fixtures/semverlite (python, JUnit XML) replays stay in step with the repo", () => {
  it("canonical replay: read -> new test -> red (12/10/2) -> compare parts as numbers -> green (12/12) -> final; every hidden case right", async () => {
    run = await fixtureRun("semverlite");
    await captureBaseline(run.ws, run.ctl);
    const changelog = await fs.readFile(path.join(run.ws, "CHANGELOG.md"), "utf8");
    const steps = await driveReplay(path.join(run.fixtureDir, "replay.json"), run.ctx, executors.python);
    expect(steps.map((s) => (s.kind === "tool" ? s.name : s.kind))).toEqual([
      "plan",
      "read_file",
      "apply_patch",
      "run_tests",
      "apply_patch",
      "run_tests",
      "final",
    ]);
    for (const s of steps) if (s.result) expect(ToolResult.safeParse(s.result).success, s.name).toBe(true);
    const [, read, addTest, red, fix, green] = steps;
    expect(read?.result?.ok).toBe(true);
    expect(addTest).toMatchObject({ verdict: "ask", wrote: true });
    expect(red?.result).toMatchObject({ ok: false, error: { code: "tests_failed" } });
    expect(counts(red!)).toEqual([12, 10, 2]);
    expect(fix).toMatchObject({ verdict: "ask", wrote: true });
    expect(green?.result).toMatchObject({ ok: true });
    expect(data(green!)).toMatchObject({ discovered: 12, passed: 12, failed: 0, green: true });
    await expectVersionOfShipped(run.fixtureDir, "replay.json", 4, "semverlite/core.py");
    expect(data(read!).version).toBe(sha256Hex(await fs.readFile(path.join(run.fixtureDir, "repo/semverlite/core.py"))));

    expect((await workspaceDiff(run.ctx)).files.map((f) => f.path)).toEqual(["semverlite/core.py", "tests/test_agent_two_digits.py"]);
    expect(await fs.readFile(path.join(run.ws, "CHANGELOG.md"), "utf8")).toBe(changelog);
    const acc = await fixtureAcceptance(run.fixtureDir, run, executors.python, 180_000);
    expect(acc.cases).toEqual({
      minor_two_digits: true,
      patch_two_digits: true,
      same_version: true,
      sort_mixed: true,
      latest_major: true,
      refuses_short: true,
    });
    expect(acc.status).toBe(0);
  });

  it("digit-count 'fix' is green on the shipped and the new tests but answers sort_mixed and latest_major wrongly", async () => {
    run = await fixtureRun("semverlite");
    await captureBaseline(run.ws, run.ctl);
    const steps = await driveReplay(path.join(run.fixtureDir, "replays/digit-count.json"), run.ctx, executors.python);
    expect(steps.filter((s) => s.name === "run_tests").map(counts)).toEqual([
      [12, 10, 2],
      [12, 12, 0],
    ]);
    expect(steps.filter((s) => s.wrote).length).toBe(2);
    await expectVersionOfShipped(run.fixtureDir, "replays/digit-count.json", 4, "semverlite/core.py");
    const acc = await fixtureAcceptance(run.fixtureDir, run, executors.python, 180_000);
    expect(acc.cases).toEqual({
      minor_two_digits: true,
      patch_two_digits: true,
      same_version: true,
      sort_mixed: false,
      latest_major: false,
      refuses_short: true,
    });
    // every case ran and answered: only the host's expected answers tell this one apart
    expect(acc.status).toBe(0);
  });
});

describe("fixtures/wordwrap (go, go test -json) replays stay in step with the repo", () => {
  it("canonical replay: read -> new test -> red (5/4/1) -> count runes in Wrap and Pad -> green (5/5) -> final; every hidden case right", async () => {
    run = await fixtureRun("wordwrap");
    await captureBaseline(run.ws, run.ctl);
    const notes = await fs.readFile(path.join(run.ws, "NOTES.md"), "utf8");
    const steps = await driveReplay(path.join(run.fixtureDir, "replay.json"), run.ctx, executors.go);
    expect(steps.map((s) => (s.kind === "tool" ? s.name : s.kind))).toEqual([
      "plan",
      "read_file",
      "apply_patch",
      "run_tests",
      "apply_patch",
      "run_tests",
      "final",
    ]);
    for (const s of steps) if (s.result) expect(ToolResult.safeParse(s.result).success, s.name).toBe(true);
    const [, , addTest, red, fix, green] = steps;
    expect(addTest).toMatchObject({ verdict: "ask", wrote: true });
    expect(red?.result).toMatchObject({ ok: false, error: { code: "tests_failed" } });
    expect(counts(red!)).toEqual([5, 4, 1]);
    expect(fix).toMatchObject({ verdict: "ask", wrote: true });
    expect(data(green!)).toMatchObject({ discovered: 5, passed: 5, failed: 0, green: true });
    await expectVersionOfShipped(run.fixtureDir, "replay.json", 4, "wordwrap.go");
    expect((await workspaceDiff(run.ctx)).files.map((f) => f.path)).toEqual(["agent_width_test.go", "wordwrap.go"]);
    expect(await fs.readFile(path.join(run.ws, "NOTES.md"), "utf8")).toBe(notes);
    const acc = await fixtureAcceptance(run.fixtureDir, run, executors.go, 180_000);
    expect(acc.cases).toEqual({ ascii_wrap: true, accented_wrap: true, accented_pad: true, greek_column: true, long_word: true, blank: true });
    expect(acc.status).toBe(0);
  });

  it("wrap-only 'fix' is green on its own test but Pad and Column still count bytes: accented_pad and greek_column fail", async () => {
    run = await fixtureRun("wordwrap");
    const steps = await driveReplay(path.join(run.fixtureDir, "replays/wrap-only.json"), run.ctx, executors.go);
    expect(steps.filter((s) => s.name === "run_tests").map(counts)).toEqual([
      [5, 4, 1],
      [5, 5, 0],
    ]);
    await expectVersionOfShipped(run.fixtureDir, "replays/wrap-only.json", 4, "wordwrap.go");
    const acc = await fixtureAcceptance(run.fixtureDir, run, executors.go, 180_000);
    expect(acc.cases).toEqual({ ascii_wrap: true, accented_wrap: true, accented_pad: false, greek_column: false, long_word: true, blank: true });
  });

  it("skipping the failing test is not green: run_tests reports the skip as not passed", async () => {
    run = await fixtureRun("wordwrap");
    const steps = await driveReplay(path.join(run.fixtureDir, "replays/skip-the-test.json"), run.ctx, executors.go);
    const [red, skipped] = steps.filter((s) => s.name === "run_tests");
    expect(counts(red!)).toEqual([5, 4, 1]);
    // go test exits 0 and says ok: only the skip tells the runner's "ok" from a fix
    expect(skipped?.result).toMatchObject({ ok: false });
    expect(data(skipped!)).toMatchObject({ discovered: 5, passed: 4, failed: 0, exit_code: 0, green: false });
    expect(steps.filter((s) => s.wrote).length).toBe(2);
  });
});

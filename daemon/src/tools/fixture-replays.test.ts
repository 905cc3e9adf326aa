import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResult } from "../contracts/tool-call.js";
import { captureBaseline } from "../workspace/baseline.js";
import { computeManifest } from "../workspace/manifest.js";
import { sha256Hex } from "../workspace/hash.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { driveReplay, fixtureAcceptance, stepData as data } from "./replay-driver.testkit.js";
import { workspaceDiff } from "./show-diff.js";
import { fixtureRun, type TempRun } from "./workspace.testkit.js";

let run: (TempRun & { fixtureDir: string }) | undefined;
afterEach(async () => run?.cleanup());

describe("fixtures/linkcheck replays stay in step with the repo", () => {
  it("canonical replay: read -> new test -> red (3/2/1) -> one-line fix with the right version -> green (3/3) -> final", async () => {
    run = await fixtureRun("linkcheck");
    await captureBaseline(run.ws, run.ctl);
    const notes = await fs.readFile(path.join(run.ws, "notes.txt"), "utf8");
    const steps = await driveReplay(path.join(run.fixtureDir, "replay.json"), run.ctx, new LocalExecutor());
    expect(steps.map((s) => (s.kind === "tool" ? s.name : s.kind))).toEqual([
      "plan",
      "read_file",
      "apply_patch",
      "run_tests",
      "apply_patch",
      "run_tests",
      "final",
    ]);
    // every result honours the one ToolResult contract (exact fields, ok/error consistency)
    for (const s of steps) if (s.result) expect(ToolResult.safeParse(s.result).success, s.name).toBe(true);
    const [, read, addTest, red, fix, green] = steps;
    expect(read?.result?.ok).toBe(true);
    expect(addTest).toMatchObject({ verdict: "ask", wrote: true });
    expect(red?.result).toMatchObject({ ok: false, error: { code: "tests_failed" } });
    expect(data(red!)).toMatchObject({
      discovered: 3,
      passed: 2,
      failed: 1,
      exit_code: 1,
      files: ["tests/test_agent_nested.js", "tests/test_extract.js", "tests/test_root.js"],
    });
    expect(fix).toMatchObject({ verdict: "ask", wrote: true });
    expect(green?.result).toMatchObject({ ok: true });
    expect(data(green!)).toMatchObject({ discovered: 3, passed: 3, failed: 0, exit_code: 0, green: true });

    // the replay's version is the SHA-256 of the shipped source, i.e. what read_file returned
    const replay = JSON.parse(await fs.readFile(path.join(run.fixtureDir, "replay.json"), "utf8"));
    const shipped = await fs.readFile(path.join(run.fixtureDir, "repo/src/linkcheck.js"));
    expect(replay.decisions[4].call.arguments.version).toBe(sha256Hex(shipped));
    expect(data(read!).version).toBe(sha256Hex(shipped));

    const diff = await workspaceDiff(run.ctx);
    expect(diff.files.map((f) => f.path)).toEqual(["src/linkcheck.js", "tests/test_agent_nested.js"]);
    expect(await fs.readFile(path.join(run.ws, "notes.txt"), "utf8")).toBe(notes);
    const acc = await fixtureAcceptance(run.fixtureDir, run, new LocalExecutor());
    expect(acc.cases).toEqual({ root_link_ok: true, root_missing: true, nested_ok: true, nested_missing: true, nested_anchor_parent: true });
    expect(acc.status).toBe(0);
  });

  it("always-empty 'fix' passes the candidate tests but fails the hidden case nested_missing", async () => {
    run = await fixtureRun("linkcheck");
    await captureBaseline(run.ws, run.ctl);
    const steps = await driveReplay(path.join(run.fixtureDir, "replays/always-empty.json"), run.ctx, new LocalExecutor());
    const tests = steps.filter((s) => s.name === "run_tests");
    expect(tests.map((s) => [data(s).discovered, data(s).passed])).toEqual([
      [3, 2],
      [3, 3],
    ]);
    expect(steps.filter((s) => s.wrote).length).toBe(2);
    const acc = await fixtureAcceptance(run.fixtureDir, run, new LocalExecutor());
    expect(acc.cases).toEqual({ root_link_ok: true, root_missing: false, nested_ok: true, nested_missing: false, nested_anchor_parent: true });
    // every case ran and answered: only the host's expected answers tell this one apart
    expect(acc.status).toBe(0);
  });

  it("final without doing anything: the unchanged repo is green on its own 2 tests yet fails the hidden cases", async () => {
    run = await fixtureRun("linkcheck");
    const before = await computeManifest(run.ws);
    const steps = await driveReplay(path.join(run.fixtureDir, "replays/final-without-work.json"), run.ctx, new LocalExecutor());
    expect(steps.map((s) => s.kind)).toEqual(["final"]);
    expect((await computeManifest(run.ws)).digest).toBe(before.digest);
    const acc = await fixtureAcceptance(run.fixtureDir, run, new LocalExecutor());
    expect(acc.cases).toMatchObject({ nested_ok: false, nested_missing: false, root_link_ok: true });
  });

  it("oversized-output replay: a passing test printing ~80 KB is shown cut to the cap with truncated=true, counts intact", async () => {
    run = await fixtureRun("linkcheck");
    const ctx = { ...run.ctx, limits: { testOutputBytes: 256 } };
    const steps = await driveReplay(path.join(run.fixtureDir, "replays/oversized-output.json"), ctx, new LocalExecutor());
    const tests = steps.find((s) => s.name === "run_tests")!;
    expect(tests.result).toMatchObject({ ok: true, truncated: true, data: { discovered: 3, passed: 3, output_truncated: true, truncated: false } });
    expect(Buffer.byteLength(data(tests).output as string)).toBeLessThanOrEqual(256);
  });

  it.each([
    ["unknown-tool.json", "unknown_tool"],
    ["invalid-fields.json", "invalid_fields"],
    ["stale-version.json", "stale_version"],
    ["path-escape.json", "path_denied"],
  ])("%s fails closed with %s and changes nothing", async (file, code) => {
    run = await fixtureRun("linkcheck");
    const before = await computeManifest(run.ws);
    const steps = await driveReplay(path.join(run.fixtureDir, "replays", file), run.ctx, new LocalExecutor());
    expect(steps[0]?.result).toMatchObject({ ok: false, error: { code } });
    expect(steps.at(-1)?.kind).toBe("final");
    expect((await computeManifest(run.ws)).digest).toBe(before.digest);
  });
});

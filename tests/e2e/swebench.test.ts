import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CaseResult } from "../../daemon/src/contracts/eval-report.js";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { parseJunitXml } from "../../daemon/src/tools/parsers/junit-xml.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { F2P, INSTANCE_ID, makeSweBenchFixture, P2P, writeJsonl } from "../kit/swebench-instance.js";
import { type DaemonHandle, runClient, Started, stateDirIn } from "./harness.js";

/**
 * SWE-bench interchange end to end: an instance of our own (a small Python
 * repository made with real git, tests/kit/swebench-instance.ts) imported by
 * the real client (`eval import --swebench`), then `eval run` through a spawned
 * daemon on the container backend (real Docker, the python image):
 *   gold    the imported case: its replay writes the reference patch
 *   empty   the same case with a replay that changes nothing
 * One daemon and one eval run serve every check here.
 *
 * Judging the gold case test by test needs the JUnit parser to name each test
 * by its pytest node id (`tests/test_calc.py::test_add`); until it does, the
 * Verifier cannot know FAIL_TO_PASS passed, and the gold check is skipped
 * (PARSER_NAMES_TESTS), while the empty-patch checks hold either way.
 */
const PYTEST_XUNIT1 =
  '<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1"><testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="3" time="0.001"/></testsuite></testsuites>';
const probe = parseJunitXml({ status: "read", bytes: Buffer.from(PYTEST_XUNIT1) }) as { cases?: { id: string }[] };
// as soon as the parser lists tests at all, the gold check runs (and fails loudly if its ids are not pytest node ids)
const PARSER_NAMES_TESTS = probe.cases !== undefined;

const docker = createDockerClient(process.env);
const started = new Started();
let d: DaemonHandle;
let out: string;
let importOutput: { code: number; stdout: string; stderr: string };

const readResult = (id: string) => CaseResult.parse(JSON.parse(fs.readFileSync(path.join(out, "cases", `${id}.json`), "utf8")));

beforeAll(async () => {
  await docker.ping();
  const base = started.dir("ma-swebench-");
  const lock = path.join(base, "image", "sandbox-image.lock.json");
  await pinTestImage(lock, "node", docker);
  await pinTestImage(lock, "python", docker);
  const fx = makeSweBenchFixture(base);
  const jsonl = writeJsonl(path.join(base, "instances.jsonl"), [fx.line]);
  const suite = path.join(base, "suite");
  importOutput = await runClient(["eval", "import", "--swebench", jsonl, "--repos", fx.reposDir, "--out", suite]);
  // the same case with a replay that changes nothing, expected to fail
  const gold = path.join(suite, INSTANCE_ID);
  const empty = path.join(suite, "empty-patch");
  fs.cpSync(gold, empty, { recursive: true });
  fs.writeFileSync(
    path.join(empty, "replay.json"),
    JSON.stringify({
      schema_version: 1,
      decisions: [
        { kind: "plan", text: "Change nothing." },
        { kind: "final", text: "Done." },
      ],
    }),
  );
  fs.writeFileSync(path.join(empty, "expect.json"), JSON.stringify({ schema_version: 1, status: "failed" }));
  // and one whose replay edits an unrelated file: a patch that exists and applies, but fixes nothing
  const unrelated = path.join(suite, "unrelated-edit");
  fs.cpSync(empty, unrelated, { recursive: true });
  const conftest = fs.readFileSync(path.join(unrelated, "repo", "conftest.py"));
  const edit = { path: "conftest.py", version: createHash("sha256").update(conftest).digest("hex"), old: "import sys, os\n", new: "import sys, os  # noqa\n" };
  fs.writeFileSync(
    path.join(unrelated, "replay.json"),
    JSON.stringify({
      schema_version: 1,
      decisions: [
        { kind: "tool", call: { call_id: "call_01", name: "apply_patch", arguments: edit } },
        { kind: "final", text: "Done." },
      ],
    }),
  );
  d = await started.daemon({ stateDir: stateDirIn(base, lock) });
  out = path.join(base, "out");
  await runClient(["eval", "run", suite, "--output", out, "--concurrency", "2", "--socket", d.socketPath]);
}, 900_000);

afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

describe("a SWE-bench-format instance of our own: imported, then run by eval run", () => {
  it("imports through the real client: one line per instance and a summary, exit 0", () => {
    expect({ code: importOutput.code, stderr: importOutput.stderr }).toEqual({ code: 0, stderr: "" });
    expect(importOutput.stdout).toMatch(
      new RegExp(`^line 1: ${INSTANCE_ID}: imported as .* \\(3 files, 1 hidden test file\\(s\\), FAIL_TO_PASS 1, PASS_TO_PASS 1\\)$`, "m"),
    );
    expect(importOutput.stdout).toMatch(/^imported 1 of 1 instance\(s\) into .*; 0 skipped$/m);
  });

  it("with an empty patch: failed, not resolved, and FAIL_TO_PASS names the hidden test as a failure", () => {
    const r = readResult("empty-patch");
    expect(r).toMatchObject({ verdict: "passed", status: "failed", reason: "no_changes" });
    expect(r.verifier_rejections).toBe(1);
    expect(r.swebench).toEqual({
      patch_exists: false,
      patch_successfully_applied: false,
      resolved: false,
      tests_status: {
        FAIL_TO_PASS: { success: [], failure: [F2P] },
        PASS_TO_PASS: { success: [], failure: [P2P] },
        FAIL_TO_FAIL: { success: [], failure: [] },
        PASS_TO_FAIL: { success: [], failure: [] },
      },
    });
  });

  it("with a patch that edits an unrelated file: it exists and applied, but FAIL_TO_PASS fails and it is not resolved", () => {
    const r = readResult("unrelated-edit");
    expect(r).toMatchObject({ verdict: "passed", status: "failed", reason: "verification_failed" });
    expect(r.swebench).toMatchObject({ patch_exists: true, patch_successfully_applied: true, resolved: false });
    expect(r.swebench?.tests_status.FAIL_TO_PASS).toEqual({ success: [], failure: [F2P] });
  });

  it("status RUN --json carries the same SWE-bench-shaped block as the eval report", async () => {
    const r = readResult(INSTANCE_ID);
    const status = await runClient(["status", r.run_id!, "--json", "--socket", d.socketPath]);
    const view = JSON.parse(status.stdout.slice(status.stdout.indexOf("{"))) as RunView;
    expect(view.swebench).toEqual(r.swebench);
    // the hidden test ran in the Verifier's sandbox (the workspace holds one test, the hidden copy two), and passed with the fix
    expect(view.verification?.tests).toMatchObject({ discovered: 2, passed: 2, failed: 0 });
    // the gold patch was written, whole
    expect(view.swebench).toMatchObject({ patch_exists: true, patch_successfully_applied: true });
    // the hidden test never entered the workspace: the run's diff is the gold patch alone
    expect(fs.readFileSync(path.join(out, "diffs", `${INSTANCE_ID}.diff`), "utf8")).not.toContain("test_divide_exact");
  });

  it.runIf(PARSER_NAMES_TESTS)("with the gold patch: completed and resolved, FAIL_TO_PASS success names the new test", () => {
    const r = readResult(INSTANCE_ID);
    expect(r, JSON.stringify(r.rules.filter((x) => !x.passed))).toMatchObject({ verdict: "passed", status: "completed" });
    expect(r.swebench).toMatchObject({
      resolved: true,
      tests_status: { FAIL_TO_PASS: { success: [F2P], failure: [] }, PASS_TO_PASS: { success: [P2P], failure: [] } },
    });
  });
});

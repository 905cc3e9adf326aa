import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskSpec } from "../contracts/task-spec.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { baselineFilesDir, captureBaseline } from "../workspace/baseline.js";
import { baselineTestsOf, fileBaselineTestStore } from "./baseline-tests.js";

/**
 * The baseline's tests with real host processes (trusted_local: node --test on
 * the baseline copy) and the real file store: what a cached answer needs.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const task = TaskSpec.parse({
  schema_version: 1,
  name: "baseline-tests",
  task: "t",
  writable: ["src/**"],
  test_presets: { unit: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.js"], parser: "node_test" } },
  verify_preset: "unit",
});

describe("the baseline's tests, once per baseline", () => {
  it("regression: the test globs were expanded with a walk of the baseline copy before the cache was asked; a cached result is found from the manifest's digest alone", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "baseline-tests-"));
    dirs.push(root);
    const ws = path.join(root, "ws");
    fs.mkdirSync(path.join(ws, "tests"), { recursive: true });
    fs.writeFileSync(path.join(ws, "tests", "a.js"), 'import test from "node:test";\ntest("a passes", () => {});\n');
    fs.writeFileSync(path.join(ws, "package.json"), '{"type":"module"}\n');
    const control = path.join(root, "control");
    const baseline = await captureBaseline(ws, control);
    const of = {
      runId: "run-bt",
      task,
      controlDir: control,
      baselineDigest: baseline.manifest.digest,
      executor: new LocalExecutor({ tmpRoot: root }),
      exportSpec: { forbidden: task.forbidden, include: [] },
      store: fileBaselineTestStore(path.join(root, "baseline-tests")),
    };
    const first = await baselineTestsOf(of, "unit");
    expect(first).toMatchObject({ cached: false, note: null, cases: [{ id: "a passes", outcome: "passed" }] });
    // the copy cannot be walked now: only a lookup that needs no walk still answers
    fs.renameSync(baselineFilesDir(control), path.join(root, "moved-away"));
    const second = await baselineTestsOf(of, "unit");
    expect(second).toEqual({ ...first, cached: true });
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { TaskSpec } from "../contracts/task-spec.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { baselineFilesDir, captureBaseline } from "../workspace/baseline.js";
import { defaultToolPort } from "../runtime/tools-port.js";
import { validateToolCall } from "../tools/validate.js";
import { baselineTestsOf, codeFingerprintAt, fileBaselineTestStore, mergeRuns, recordCodeFingerprint } from "./baseline-tests.js";

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

/** a project with one passing test (and `more` test files), its baseline captured in a control dir beside it */
async function project(more: Record<string, string> = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "baseline-tests-"));
  dirs.push(root);
  const ws = path.join(root, "ws");
  fs.mkdirSync(path.join(ws, "tests"), { recursive: true });
  fs.writeFileSync(path.join(ws, "tests", "a.js"), 'import test from "node:test";\ntest("a passes", () => {});\n');
  fs.writeFileSync(path.join(ws, "package.json"), '{"type":"module"}\n');
  for (const [rel, text] of Object.entries(more)) fs.writeFileSync(path.join(ws, rel), text);
  const control = path.join(root, "control");
  const baseline = await captureBaseline(ws, control);
  return { root, ws, control, baseline, executor: new LocalExecutor({ tmpRoot: root }), store: fileBaselineTestStore(path.join(root, "baseline-tests")) };
}

describe("the baseline's tests, once per baseline", () => {
  it("regression: the test globs were expanded with a walk of the baseline copy before the cache was asked; a cached result is found from the manifest's digest alone", async () => {
    const { root, control, baseline, executor, store } = await project();
    const of = {
      runId: "run-bt",
      task,
      controlDir: control,
      baselineDigest: baseline.manifest.digest,
      executor,
      exportSpec: { forbidden: task.forbidden, include: [] },
      store,
    };
    const first = await baselineTestsOf(of, "unit");
    expect(first).toMatchObject({ cached: false, note: null, cases: [{ id: "a passes", outcome: "passed" }] });
    // the copy cannot be walked now: only a lookup that needs no walk still answers
    fs.renameSync(baselineFilesDir(control), path.join(root, "moved-away"));
    const second = await baselineTestsOf(of, "unit");
    expect(second).toEqual({ ...first, cached: true });
  });

  it("regression: run_tests reloaded and re-checked the baseline manifest on every call; the run's port reads it once", async () => {
    const { ws, control, executor, store } = await project();
    const ctx = {
      task,
      workspaceRoot: ws,
      controlDir: control,
      runId: "run-port",
      signal: new AbortController().signal,
      timeoutMs: 60_000,
      executor,
      session: () => executor.openSession("run-port"),
      baselineTests: store,
    };
    const port = defaultToolPort();
    const call = validateToolCall({ call_id: "c1", name: "run_tests", arguments: { preset: "unit" } });
    if (!call.ok) throw new Error("the call is valid");
    const delta = async () => ((await port.run(call, ctx)).data as { against_baseline?: Record<string, unknown> }).against_baseline;
    expect(await delta()).toMatchObject({ baseline: "compared", baseline_cached: false });
    // a manifest read again now would fail its digest check: the second call still compares, from the cache
    const manifest = path.join(control, "baseline", "manifest.json");
    fs.writeFileSync(manifest, fs.readFileSync(manifest, "utf8").replace(/"digest": "[0-9a-f]+"/, `"digest": "${"0".repeat(64)}"`));
    expect(await delta()).toMatchObject({ baseline: "compared", baseline_cached: true });
  });
});

describe("a baseline run twice, for ids that change from run to run", () => {
  const ofProject = (p: Awaited<ReturnType<typeof project>>, runId: string) => ({
    runId,
    task,
    controlDir: p.control,
    baselineDigest: p.baseline.manifest.digest,
    executor: p.executor,
    exportSpec: { forbidden: task.forbidden, include: [] },
    store: p.store,
  });

  it("regression: a node:test title holding Math.random() and Date.now() named another test on each run; both runs' ids of it are unstable, the ordinary tests stay stable, and the cache keeps it", async () => {
    const titles = [
      'import test from "node:test";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the test file's own template literal, written out as source
      "test(`draws ${Math.random()}`, () => {});",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: as above
      "test(`made at ${Date.now()}`, () => {});",
      'test("b passes", () => {});',
    ];
    const p = await project({ "tests/b.js": `${titles.join("\n")}\n` });
    // the two runs of one lookup may land in one millisecond: never for Math.random()
    const first = await baselineTestsOf(ofProject(p, "run-twice"), "unit");
    expect(first.cached).toBe(false);
    const ids = (first.cases ?? []).map((c) => c.id);
    expect(ids).toEqual(expect.arrayContaining(["a passes", "b passes"]));
    const drawn = ids.filter((id) => id.startsWith("draws "));
    expect(drawn).toHaveLength(2);
    expect(first.unstable).toEqual(expect.arrayContaining(drawn));
    expect(first.unstable).not.toContain("a passes");
    expect(first.unstable).not.toContain("b passes");
    const again = await baselineTestsOf(ofProject(p, "run-twice"), "unit");
    expect(again).toEqual({ ...first, cached: true });
  });

  it("regression: a record kept before the baseline ran twice (schema 1, no unstable list) is a miss, never read as 'nothing unstable'", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baseline-store-"));
    dirs.push(dir);
    const key = "a".repeat(64);
    fs.writeFileSync(path.join(dir, `${key}.json`), JSON.stringify({ schema_version: 1, cases: [{ id: "x", outcome: "passed" }], note: null }));
    expect(await fileBaselineTestStore(dir).get(key)).toBeNull();
  });

  it("merging the two runs: an id in both is stable, passing if either run passed it; an id in one run is unstable and kept with its outcome", () => {
    const r = mergeRuns(
      [
        { id: "a", outcome: "passed" },
        { id: "flaky", outcome: "failed" },
        { id: "r1", outcome: "failed" },
      ],
      [
        { id: "a", outcome: "passed" },
        { id: "flaky", outcome: "passed" },
        { id: "r2", outcome: "passed" },
      ],
    );
    expect(r).toEqual({
      schema_version: 2,
      note: null,
      cases: [
        { id: "a", outcome: "passed" },
        { id: "flaky", outcome: "passed" },
        { id: "r1", outcome: "failed" },
        { id: "r2", outcome: "passed" },
      ],
      unstable: ["r1", "r2"],
    });
  });
});

const fpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-fingerprint-"));
afterAll(() => fs.rmSync(fpRoot, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(fpRoot, "t-"));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return path.join(dir, "verifier/baseline-tests.js");
}

const BASE = {
  "verifier/baseline-tests.js": "record",
  "tools/run-tests.js": "summarize",
  "tools/parsers/junit-xml.js": "parse v1",
  "tools/parsers/junit-xml.test.js": "a test",
  "tools/parsers/samples/x.xml": "<x/>",
};

describe("baseline records are keyed by the code that made them", () => {
  it("regression: a record made by other parsing code was reused (a JUnit report the old parser refused stayed refused after the fix)", () => {
    const before = codeFingerprintAt(tree(BASE));
    expect(codeFingerprintAt(tree(BASE))).toBe(before);
    expect(codeFingerprintAt(tree({ ...BASE, "tools/parsers/junit-xml.js": "parse v2" }))).not.toBe(before);
    expect(codeFingerprintAt(tree({ ...BASE, "tools/run-tests.js": "summarize v2" }))).not.toBe(before);
    expect(codeFingerprintAt(tree({ ...BASE, "verifier/baseline-tests.js": "record v2" }))).not.toBe(before);
    // tests and report samples beside the parsers do not decide a record
    expect(codeFingerprintAt(tree({ ...BASE, "tools/parsers/junit-xml.test.js": "another test", "tools/parsers/samples/x.xml": "<y/>" }))).toBe(before);
  });

  it("this process's fingerprint covers the real parsers", () => {
    expect(recordCodeFingerprint()).toMatch(/^[0-9a-f]{64}$/);
    expect(recordCodeFingerprint()).not.toBe(codeFingerprintAt(path.join(fpRoot, "nowhere/verifier/baseline-tests.js")));
  });
});

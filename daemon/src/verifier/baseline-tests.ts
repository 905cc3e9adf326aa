/**
 * The baseline's tests: the verify preset run on the run's baseline copy (the
 * files as they were at run start, kept in its control dir) in a FRESH sandbox,
 * so a result can be judged test by test against where the project started
 * (tools/test-compare.ts). Once per baseline: the result is cached in the state
 * dir under a key of everything that decides it (the baseline's digest, the
 * command, the parser, the image and runtime, the layers, what is exported), so
 * run_tests, the Verifier, a resumed run, a re-verification and every eval case
 * on the same repository reuse one run.
 *
 * The suite runs TWICE when a baseline is first computed: a test whose title
 * holds a random value or the time has another id on every run, and with one run
 * it looked "disappeared" after a run that changed nothing about it. An id seen
 * in only one of the two runs is kept as `unstable` (test-compare.ts says what
 * the verdict makes of it). The second run costs one more sandbox run of the
 * suite, once per cache key; every later lookup reads the record.
 */
import { createHash } from "node:crypto";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { ExportSpec } from "../contracts/sandbox.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import { TestCase } from "../contracts/test-report.js";
import { isMiniAgentError } from "../errors.js";
import type { Executor } from "../sandbox/executor.js";
import type { ToolLimits } from "../tools/limits.js";
import { presetInvocation, reportFileFor, summarizePreset, testRunFacts } from "../tools/run-tests.js";
import type { BaselineTests } from "../tools/test-verdict.js";
import { judgeTestRun } from "../tools/test-verdict.js";
import { baselineFilesDir } from "../workspace/baseline.js";
import { canonicalJson, sha256Hex } from "../workspace/hash.js";
import { VERIFIER_DEFAULTS } from "./limits.js";

// v2: two runs, and `unstable`; a v1 record (one run) would read as "nothing unstable", so it is a miss
export const BaselineTestRecord = z.strictObject({
  schema_version: z.literal(2),
  cases: z.array(TestCase).nullable(),
  note: z.string().max(2_000).nullable(),
  /** ids in `cases` seen in only one of the two runs */
  unstable: z.array(z.string()),
});
export type BaselineTestRecord = z.infer<typeof BaselineTestRecord>;

/** Where baseline results are kept; a record that cannot be read is a miss, never an error. */
export interface BaselineTestStore {
  get(key: string): Promise<BaselineTestRecord | null>;
  put(key: string, record: BaselineTestRecord): Promise<void>;
}

const KEY = /^[0-9a-f]{64}$/;

/** One JSON file per key under `dir` (the state dir's `baseline-tests/`), written whole or not at all. */
export function fileBaselineTestStore(dir: string): BaselineTestStore {
  return {
    async get(key) {
      if (!KEY.test(key)) return null;
      try {
        const file = path.join(dir, `${key}.json`);
        const parsed = BaselineTestRecord.safeParse(JSON.parse(await fs.readFile(file, "utf8")));
        if (!parsed.success) return null;
        // used now: `gc` keeps what was used within its window
        const now = new Date();
        await fs.utimes(file, now, now).catch(() => {});
        return parsed.data;
      } catch {
        return null;
      }
    },
    async put(key, record) {
      if (!KEY.test(key)) return;
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      const tmp = path.join(dir, `.${key}.${process.pid}.tmp`);
      await fs.writeFile(tmp, JSON.stringify(record), { mode: 0o600 });
      await fs.rename(tmp, path.join(dir, `${key}.json`));
    },
  };
}

/** No cache: every call runs the baseline (tests and callers without a state dir). */
export const NO_BASELINE_STORE: BaselineTestStore = { get: async () => null, put: async () => {} };

export interface BaselineTestInput {
  runId: string;
  task: TaskSpec;
  preset: string;
  /** the run's control dir: the baseline copy lives in it */
  controlDir: string;
  /** the baseline manifest's digest: the workspace the baseline copy holds */
  baselineDigest: string;
  executor: Executor;
  exportSpec: ExportSpec;
  limits: Pick<ToolLimits, "testDiagnostics" | "diagnosticChars" | "testReportMaxBytes">;
  outputCapBytes: number;
  timeoutMs?: number;
  store: BaselineTestStore;
  signal?: AbortSignal;
  onIncluded?: (paths: string[]) => void;
}

/** What run_tests and the Verifier know when they ask for the baseline's tests. */
export type BaselineRunOf = Pick<
  BaselineTestInput,
  "runId" | "task" | "controlDir" | "baselineDigest" | "executor" | "exportSpec" | "signal" | "onIncluded"
> & {
  store?: BaselineTestStore;
};

/**
 * The one way run_tests and the Verifier ask for a preset's baseline: the
 * Verifier's limits, and no store meaning no cache. Built once here so the two
 * cannot run, read or key the baseline differently.
 */
export function baselineTestsOf(of: BaselineRunOf, preset: string): Promise<BaselineTests> {
  return baselineTests({
    runId: of.runId,
    task: of.task,
    preset,
    controlDir: of.controlDir,
    baselineDigest: of.baselineDigest,
    executor: of.executor,
    exportSpec: of.exportSpec,
    ...(of.onIncluded && { onIncluded: of.onIncluded }),
    limits: VERIFIER_DEFAULTS,
    outputCapBytes: VERIFIER_DEFAULTS.outputCapBytes,
    store: of.store ?? NO_BASELINE_STORE,
    ...(of.signal && { signal: of.signal }),
  });
}

/**
 * The bytes of the code that turns a sandbox's output into the cached record: the report parsers,
 * run-tests.ts and this file, as this process loaded them. A record is what that code made of one
 * run, so a mini-agent whose parsing changed (a report it refused, an id it now writes another
 * way) never reads an older one's records as its own: they are under another key.
 */
let codeFingerprint: string | undefined;
export function recordCodeFingerprint(): string {
  codeFingerprint ??= codeFingerprintAt(fileURLToPath(import.meta.url));
  return codeFingerprint;
}

/** The fingerprint for this file at `self` (its .ts or .js), with run-tests and the parsers beside it as in the tree. */
export function codeFingerprintAt(self: string): string {
  const parsers = path.join(path.dirname(self), "../tools/parsers");
  const files = [self, ...[".js", ".ts"].map((ext) => path.join(path.dirname(self), `../tools/run-tests${ext}`))];
  try {
    for (const f of fsSync.readdirSync(parsers).sort()) files.push(path.join(parsers, f));
  } catch {
    /* no folder beside this file (a bundle): the files that are there still count */
  }
  const h = createHash("sha256");
  for (const f of files) {
    if (/\.test\.|\.testkit\.|\.map$/.test(f)) continue;
    try {
      h.update(`${path.basename(f)}\0`).update(fsSync.readFileSync(f));
    } catch {
      /* not this extension, or a folder (samples/) */
    }
  }
  return h.digest("hex");
}

/** The baseline's test list, from the cache or a fresh sandbox. Never throws for an outcome: a list it cannot read is `cases: null` and a note. */
export async function baselineTests(input: BaselineTestInput): Promise<BaselineTests> {
  const preset = input.task.test_presets[input.preset];
  if (preset === undefined) return { cases: null, note: `no test preset '${input.preset}'`, cached: false };
  if (preset.parser === "exit_code") return { cases: null, note: "the preset is exit code only: it names no tests", cached: false };
  const described = await input.executor.describe().catch(() => null);
  // keyed by what decides the argv, not by the argv: the baseline copy is fixed by its digest, so the
  // command, its file globs and the forbidden globs (in the export) decide what the globs expand to,
  // and a hit needs no walk of the copy (v2: v1 keyed the expanded argv, after a walk on every call; v3: two runs;
  // v4: the copy holds the workspace's links, so a linked fixture's tests no longer fail on it)
  const key = sha256Hex(
    canonicalJson({
      v: 4,
      code: recordCodeFingerprint(),
      baseline: input.baselineDigest,
      command: preset.command,
      files: preset.files,
      forbidden: input.task.forbidden,
      timeout_seconds: preset.timeout_seconds,
      parser: preset.parser,
      image: described?.imageDigest ?? null,
      runtime: described?.runtime ?? null,
      backend: input.executor.kind,
      export: input.exportSpec,
    }),
  );
  const hit = await input.store.get(key);
  if (hit !== null) return { cases: hit.cases, note: hit.note, unstable: hit.unstable, cached: true };
  const root = baselineFilesDir(input.controlDir);
  const inv = await presetInvocation(input.task, input.preset, root).catch(() => null);
  if (inv === null) return { cases: null, note: "the baseline copy could not be read", cached: false };
  // the run created the preset's test files: nothing existed before, every test is new
  if (preset.files.length > 0 && inv.files.length === 0) return { cases: [], note: null, cached: false };
  const first = await runOnce(input, inv, root);
  if (first.record === null || first.record.cases === null) return settle(input, key, first, null);
  const second = await runOnce(input, inv, root);
  return settle(input, key, first, second);
}

type Run = Awaited<ReturnType<Executor["run"]>>;
type Once = { res: Run | null; record: BaselineTestRecord | null; error?: string };

/** One run of the suite on the baseline copy: its record, or (no sandbox) why not. */
async function runOnce(input: BaselineTestInput, inv: { argv: string[]; timeoutMs: number }, root: string): Promise<Once> {
  const preset = input.task.test_presets[input.preset]!;
  const reportFile = reportFileFor(preset.parser, input.limits);
  let res: Run;
  try {
    res = await input.executor.run({
      runId: input.runId,
      purpose: "verifier",
      argv: inv.argv,
      workspaceDir: root,
      exportSpec: input.exportSpec,
      ...(input.onIncluded && { onIncluded: input.onIncluded }),
      timeoutMs: input.timeoutMs ?? inv.timeoutMs,
      outputCapBytes: input.outputCapBytes,
      signal: input.signal,
      ...(reportFile && { reportFile }),
    });
  } catch (err) {
    return { res: null, record: null, error: `the baseline's tests could not run (${isMiniAgentError(err) ? err.code : "sandbox_error"})` };
  }
  return { res, record: toRecord(res, summarizePreset(preset.parser, res, input.limits)) };
}

/** A cancel, a lost sandbox or a timeout says nothing lasting about the baseline: a record made with one is not kept. */
const lasting = (o: Once | null) => o === null || (o.res !== null && !o.res.cancelled && !o.res.sandbox_lost && !o.res.timed_out);

/**
 * The two runs made one record, kept when both said something lasting. The second run's list
 * adds to the first's and never replaces it: a second run that could not be read leaves the
 * first's list with nothing known unstable, and says so.
 */
async function settle(input: BaselineTestInput, key: string, first: Once, second: Once | null): Promise<BaselineTests> {
  if (first.record === null) return { cases: null, note: first.error ?? "the baseline's tests could not run", cached: false };
  let record = first.record;
  if (second !== null && first.record.cases !== null) {
    record =
      second.record?.cases != null
        ? mergeRuns(first.record.cases, second.record.cases)
        : {
            ...first.record,
            note: `the baseline's second run could not be read (${second.record?.note ?? second.error ?? "no result"}): no test id is known to be unstable`,
          };
  }
  if (lasting(first) && lasting(second)) await input.store.put(key, record).catch(() => {});
  return { cases: record.cases, note: record.note, unstable: record.unstable, cached: false };
}

/**
 * One list from two runs of the unchanged baseline. An id in both is stable; its outcome is the
 * first run's, except that a test that passed in either run counts as passing (the strict reading:
 * failing now is then pass_to_fail, never an excused fail_to_fail). An id in only one run is
 * unstable and kept with its outcome, so a result that does name it again is compared as usual.
 */
export function mergeRuns(a: readonly TestCase[], b: readonly TestCase[]): BaselineTestRecord {
  const inB = new Map(b.map((c) => [c.id, c]));
  const inA = new Set(a.map((c) => c.id));
  const cases: TestCase[] = a.map((c) => (c.outcome !== "passed" && inB.get(c.id)?.outcome === "passed" ? { ...c, outcome: "passed" } : c));
  const unstable = a.filter((c) => !inB.has(c.id)).map((c) => c.id);
  for (const c of b)
    if (!inA.has(c.id)) {
      cases.push(c);
      unstable.push(c.id);
    }
  return { schema_version: 2, cases, note: null, unstable };
}

function toRecord(res: Run, summary: ReturnType<typeof summarizePreset>): BaselineTestRecord {
  const unreadable = (why: string): BaselineTestRecord => ({ schema_version: 2, cases: null, note: why.slice(0, 2_000), unstable: [] });
  if (res.cancelled) return unreadable("the baseline's tests were cancelled");
  if (res.timed_out) return unreadable("the baseline's tests timed out");
  if (res.sandbox_lost) return unreadable("the sandbox stopped while the baseline's tests ran");
  // cut stdout matters only where the counts come from it: a report file read whole is the list (testRunFacts)
  if (testRunFacts(res).truncated) return unreadable("the baseline's test output was cut");
  if (!summary.summary_found) return unreadable(`the baseline's tests left no report (${judgeTestRun(testRunFacts(res), summary).message})`);
  if (summary.cases === undefined || summary.cases_complete === false) return unreadable("the baseline's report names too many tests to compare one by one");
  return { schema_version: 2, cases: [...summary.cases], note: null, unstable: [] };
}

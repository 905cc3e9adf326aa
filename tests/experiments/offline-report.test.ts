import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stableStringify } from "../../experiments/src/canonical.js";
import { GROUPS } from "../../experiments/src/groups.js";

/**
 * The offline report as an operator runs it (`node --import tsx scripts/experiments.ts`,
 * which is what `npm run experiments` calls), in real processes against the real
 * engine. Two independent runs must give byte-identical offline-canonical.json.
 * That is proven without a second full run of every group (it doubled the cost of
 * the most expensive file of the suite):
 *  - a scenario that passes by the default rule observed exactly its expected value,
 *    so its canonical bytes are fixed by its definition: every passing run writes them;
 *  - a group with a scenario that keeps measured values beside its expected facts (its
 *    own `check`) runs a second time, at once with the full run (a report that is only
 *    deterministic on an idle engine fails here), and that run's canonical file is
 *    byte-identical to the one the full run's group renders to;
 *  - the renderer writes the same bytes for the same observations whatever paths, times
 *    and details differ (experiments/src/runner.test.ts, "canonical output").
 * The other cases run beside them.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: string;

type Outcome = { code: number | null; stdout: string; stderr: string };
function report(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/experiments.ts", ...args], { cwd: ROOT, timeout: 2_400_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The reports pin the images the test command built (--image-lock) rather than building the three
 * families again each (the go family alone takes minutes); run directly, without that lock, each builds its own.
 */
const IMAGES = process.env.MINI_AGENT_TEST_IMAGE_LOCK ? ["--image-lock", process.env.MINI_AGENT_TEST_IMAGE_LOCK] : [];

const sha = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** the groups with a scenario whose observation keeps measured values beside its expected facts: they run twice */
const MEASURED = Object.values(GROUPS)
  .filter((g) => g.scenarios.some((s) => s.check !== undefined))
  .map((g) => g.id);

/** the full report and the second run of each MEASURED group, started once for the cases that read them */
let full: Promise<Outcome>;
let again: Promise<Outcome[]>;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "experiments-test-"));
  full = report(["--group", "all", "--output", path.join(tmp, "a"), ...IMAGES]);
  again = Promise.all(MEASURED.map((id) => report(["--group", id.replace("group-", ""), "--output", path.join(tmp, `again-${id}`), ...IMAGES])));
  // a rejection is reported by the cases that await it, not as an unhandled one
  full.catch(() => undefined);
  again.catch(() => undefined);
});
afterAll(async () => {
  await Promise.all([full.catch(() => undefined), again.catch(() => undefined)]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

type Scenario = { id: string; passed: boolean; expected: Record<string, unknown>; observed: Record<string, unknown> };

describe.concurrent("npm run experiments", () => {
  // the full report and the second runs at once: generous, since other work may share the 2 cores (on a host at load 40 two full reports took over 25 min)
  it("two independent runs give byte-identical offline-canonical.json: every group passes, default-rule scenarios observed exactly their expected bytes, measured groups run again give the same bytes", {
    timeout: 2_700_000,
  }, async () => {
    const a = await full;
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    const ha = sha(path.join(tmp, "a", "offline-canonical.json"));
    expect(a.stdout).toContain(`offline-canonical.json sha256 ${ha}`);
    const canonical = JSON.parse(fs.readFileSync(path.join(tmp, "a", "offline-canonical.json"), "utf8"));

    // the rule proved here must keep holding: today one group keeps measured values (group 4's context scenario)
    expect(MEASURED).toEqual(["group-4"]);
    for (const g of canonical.groups) {
      const def = GROUPS[g.group as keyof typeof GROUPS];
      expect(g.scenarios.map((s: Scenario) => s.id)).toEqual(def.scenarios.map((s) => s.id));
      for (const [i, s] of (g.scenarios as Scenario[]).entries()) {
        const d = def.scenarios[i]!;
        // fixed by the definition: what every passing run writes for this scenario
        expect(stableStringify(s.expected), `${g.group}/${s.id}`).toBe(stableStringify(d.expected));
        if (d.check === undefined) expect(stableStringify(s.observed), `${g.group}/${s.id}`).toBe(stableStringify(d.expected));
      }
    }
    const runs = await again;
    for (const [i, id] of MEASURED.entries()) {
      const b = runs[i]!;
      expect(b.stderr).toBe("");
      expect(b.code).toBe(0);
      const file = path.join(tmp, `again-${id}`, "offline-canonical.json");
      const hb = sha(file);
      expect(b.stdout).toContain(`offline-canonical.json sha256 ${hb}`);
      // the full run's group rendered as a report of that group alone: the same bytes, environment included
      const group = canonical.groups.find((g: { group: string }) => g.group === id);
      const alone = stableStringify({ ...canonical, groups_run: [id], passed: group.passed, groups: [group] });
      expect(fs.readFileSync(file, "utf8")).toBe(alone);
      expect(hb).toBe(createHash("sha256").update(alone).digest("hex"));
    }

    const files = fs.readdirSync(path.join(tmp, "a")).sort();
    expect(files).toEqual(["environment.json", "group-1.json", "group-2.json", "group-3.json", "group-4.json", "group-5.json", "offline-canonical.json"]);
    expect(canonical.passed).toBe(true);
    expect(canonical.groups.map((g: { scenarios: unknown[] }) => g.scenarios.length)).toEqual([3, 6, 3, 4, 5]);
    for (const g of canonical.groups) {
      for (const s of g.scenarios) expect(Object.keys(s).sort()).toEqual(["criterion", "does_not_prove", "expected", "id", "observed", "passed", "title"]);
    }
    const text = fs.readFileSync(path.join(tmp, "a", "offline-canonical.json"), "utf8");
    expect(text).not.toContain(tmp);
    expect(text).not.toContain(ROOT);
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(text).not.toMatch(/run_[0-9a-f]{8,}/);
    expect(canonical.environment).toMatchObject({ node: process.version, os_family: process.platform, backend: "container", runtime: "runc" });
    expect(canonical.environment.dependencies.zod).toBe("4.6.7");
  });

  it("group-4.json keeps what every isolation probe observed, pooled_indistinguishable among them, outside the canonical file", {
    timeout: 2_700_000,
  }, async () => {
    await full;
    const g4 = JSON.parse(fs.readFileSync(path.join(tmp, "a", "group-4.json"), "utf8"));
    const probes: Array<{ id: string; passed: boolean; observed: unknown }> = g4.non_canonical.details.isolation_report.probes;
    const pooled = probes.find((p) => p.id === "pooled_indistinguishable");
    expect(pooled).toMatchObject({ passed: true, observed: { served_by_pool: true, inspect_differences: [], verdict_differences: [] } });
    const iso = g4.scenarios.find((s: Scenario) => s.id === "isolation_report");
    expect(probes.filter((p) => !p.passed).map((p) => p.id)).toEqual(iso.observed.failed_probes);
    expect(fs.readFileSync(path.join(tmp, "a", "offline-canonical.json"), "utf8")).not.toContain("served_by_pool");
  });

  // moved here from group-5.test.ts, which ran `--group 5` twice more for the same facts
  it("group-5.json has one scenario per orchestrator plus re-entry and final_output; manual completes", { timeout: 2_700_000 }, async () => {
    const a = await full;
    // a scenario that cannot run (an orchestrator that does not load) is a failed scenario, never a crashed report
    expect([0, 1]).toContain(a.code);
    expect(a.stderr).not.toMatch(/\n\s+at /);
    const g5 = JSON.parse(fs.readFileSync(path.join(tmp, "a", "group-5.json"), "utf8"));
    expect(g5.group).toBe("group-5");
    const scenarios: Scenario[] = g5.scenarios;
    expect(scenarios.map((s) => s.id)).toEqual([
      "canonical_replay_manual",
      "canonical_replay_langgraph",
      "canonical_replay_agents_sdk",
      "langgraph_reentry_one_write",
      "agents_sdk_final_output_not_completion",
    ]);
    for (const s of scenarios) {
      expect(Object.keys(s).sort()).toEqual(["criterion", "does_not_prove", "expected", "id", "observed", "passed", "title"]);
      expect(typeof s.observed).toBe("object");
    }
    const manual = scenarios[0]!;
    expect(manual.passed).toBe(true);
    expect(manual.observed).toMatchObject({
      status: "completed",
      writes: 2,
      receipts: 2,
      candidate_tests: { discovered: 3, passed: 3, failed: 0 },
      approvals: { asked: 2, given: 2 },
      orchestrator: { name: "manual", package: "mini-agent" },
    });
    // the frameworks' installed versions are what the report expects them to record
    expect(scenarios[1]!.expected.orchestrator).toEqual({ name: "langgraph", package: "@langchain/langgraph", version: "1.7.3" });
    expect(scenarios[2]!.expected.orchestrator).toEqual({ name: "agents-sdk", package: "@openai/agents", version: "0.20.0" });
    expect(g5.passed).toBe(scenarios.every((s) => s.passed));
    const canonical = JSON.parse(fs.readFileSync(path.join(tmp, "a", "offline-canonical.json"), "utf8"));
    expect(a.code).toBe(canonical.groups.every((g: { passed: boolean }) => g.passed) ? 0 : 1);
  });

  it("refuses an existing output dir without --replace and leaves it untouched", async () => {
    const dir = path.join(tmp, "existing");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "keep.txt"), "earlier evidence\n");
    const r = await report(["--group", "1", "--output", dir]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain("--replace");
    expect(fs.readdirSync(dir)).toEqual(["keep.txt"]);
  });

  it("--replace keeps the old report as DIR.previous-N and writes a new one", async () => {
    const dir = path.join(tmp, "replaced");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "keep.txt"), "first\n");
    fs.mkdirSync(`${dir}.previous-1`);
    // group 2: the cheapest group that runs on the engine (group 1 builds the go and python images and runs their fixtures)
    const r = await report(["--group", "2", "--output", dir, "--replace", ...IMAGES]);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(`${dir}.previous-2`, "keep.txt"), "utf8")).toBe("first\n");
    expect(fs.readdirSync(dir).sort()).toEqual(["environment.json", "group-2.json", "offline-canonical.json"]);
  });

  // with no reachable engine (exit 2, isolation available=false, reason runtime_unavailable): tests/experiments/no-engine.unit.test.ts,
  // which asserts every fact the same no-engine run here did

  it("rejects unknown options with a usage error", async () => {
    const r = await report(["--group", "6", "--output", path.join(tmp, "x")]);
    expect(r.code).toBe(64);
    expect(fs.existsSync(path.join(tmp, "x"))).toBe(false);
  });
});

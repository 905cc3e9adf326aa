import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter } from "../../daemon/src/sandbox/labels.js";
import { launchBrowser, pngSize } from "../kit/cdp.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started } from "./harness.js";

/**
 * Issue 13's done-when, end to end with real processes: one spawned daemon on
 * the container backend and the real client.
 * - `eval run evals/ --concurrency 2` passes every shipped case, and the HTML
 *   report it wrote renders in headless chromium and is screenshotted.
 * - A run captured with `eval capture` replays as a case with the same verdict;
 *   an expect.json edited to demand what the run did not do fails, naming the rule.
 * - The release gate's three outcomes from REAL eval reports over one suite:
 *   the same report (allow), a replay suite that spends more tool calls
 *   (review), a deliberately worse replay suite (block).
 */
const EVALS = path.join(REPO, "evals");
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let stateDir: string;
let work: string;

beforeAll(async () => {
  await docker.ping();
  stateDir = started.dir("ma-evalgate-state-");
  work = started.dir("ma-evalgate-work-");
  const lock = path.join(stateDir, "sandbox-image.lock.json");
  for (const family of ["node", "python", "go"] as const) await pinTestImage(lock, family);
  await started.daemon({ stateDir });
}, 900_000);
afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  // the daemon's own sandboxes are gone once it stopped (pool members included)
  const left = await docker.listContainers({ all: true, filters: { label: [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))] } });
  started.removeDirs();
  expect(left.map((c) => c.Id)).toEqual([]);
}, 300_000);

const client = (args: string[]) => runClient(["--state-dir", stateDir, ...args]);
const readReport = (out: string) => EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
const verdicts = (r: EvalReport) => Object.fromEntries(r.cases.map((c) => [c.id, c.verdict]));

/** a suite of linkcheck cases: each the fixture's repo, task and control, the given replay and expect.json */
function suite(name: string, cases: Record<string, { replay: unknown; expect: unknown }>): string {
  const dir = path.join(work, name);
  for (const [id, c] of Object.entries(cases)) {
    const caseDir = path.join(dir, id);
    fs.mkdirSync(caseDir, { recursive: true });
    for (const part of ["repo", "control", "task.json"]) fs.cpSync(path.join(FIXTURE, part), path.join(caseDir, part), { recursive: true });
    fs.writeFileSync(path.join(caseDir, "replay.json"), JSON.stringify(c.replay, null, 2));
    fs.writeFileSync(path.join(caseDir, "expect.json"), JSON.stringify(c.expect, null, 2));
  }
  return dir;
}
const shippedExpect = (id: string) => JSON.parse(fs.readFileSync(path.join(EVALS, id, "expect.json"), "utf8")) as Record<string, unknown>;
const replayOf = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(FIXTURE, file), "utf8")) as { schema_version: 1; decisions: Array<Record<string, unknown>> };

describe("eval run over the shipped suite", () => {
  it("passes every shipped case at concurrency 2 and its own default gate (regression: the cases that provoke protocol errors on purpose blocked it), and its HTML report renders in headless chromium with no console error and is screenshotted", async () => {
    const out = path.join(work, "shipped");
    const r = await client(["eval", "run", EVALS, "--output", out, "--concurrency", "2"]);
    const report = readReport(out);
    expect(
      report.cases.filter((c) => c.verdict !== "passed").map((c) => ({ id: c.id, rules: c.rules.filter((x) => !x.passed), error: c.error })),
      r.stderr,
    ).toEqual([]);
    expect(r.code).toBe(0);
    expect(report.cases.length).toBeGreaterThanOrEqual(10);
    expect(report.aggregates.pass_rate).toBe(1);
    expect(report.settings).toMatchObject({ model: "replay", policy_profile: "eval", concurrency: 2 });
    // the two cases that show a refused call expect their one protocol error each; nothing else makes one
    expect(report.aggregates.protocol_error_rate).toBeGreaterThan(0);
    expect(report.aggregates.unexpected_protocol_errors).toBe(0);
    const g = await client(["gate", "--report", path.join(out, "eval-report.json")]);
    expect(g.stdout).toMatch(/protocol_error_rate\s+0 % of tool calls unexpected/);
    expect(g.stdout).toContain("decision: allow");
    expect(g.code, g.stdout + g.stderr).toBe(0);

    const html = path.join(out, "eval-report.html");
    const browser = await launchBrowser();
    try {
      const url = pathToFileURL(html).href;
      const page = await browser.visit(url);
      expect(page.errors).toEqual([]);
      expect(page.requests).toEqual([url]);
      for (const c of report.cases) expect(page.text).toContain(c.id);
      const shot = path.join(out, "eval-report.png");
      fs.writeFileSync(shot, page.screenshot);
      expect(pngSize(fs.readFileSync(shot)).width).toBeGreaterThan(400);
    } finally {
      await browser.close();
    }
  });
});

describe("eval capture", () => {
  it("a captured run replays as a case with the same verdict; an expect.json demanding what the run did not do fails naming that rule", async () => {
    const ws = path.join(work, "capture-ws");
    const run = await client(["run", "--fixture", FIXTURE, "--workspace", ws, "--policy-profile", "eval", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const runId = (JSON.parse(run.stdout.slice(run.stdout.lastIndexOf("\n{") + 1)) as { run_id: string }).run_id;
    const caseDir = path.join(work, "captured", "linkcheck-captured");
    fs.mkdirSync(path.dirname(caseDir));
    const cap = await client(["eval", "capture", runId, "--out", caseDir]);
    expect(cap.code, cap.stderr).toBe(0);

    const out1 = path.join(work, "captured-run");
    const r1 = await client(["eval", "run", caseDir, "--output", out1]);
    expect(r1.code, r1.stderr).toBe(0);
    const c1 = readReport(out1).cases[0]!;
    expect(c1).toMatchObject({ id: "linkcheck-captured", verdict: "passed", status: "completed", expected_status: "completed" });

    // the run never called run_command: demanding it must fail the case, naming must_call
    const expectFile = path.join(caseDir, "expect.json");
    const expectJson = JSON.parse(fs.readFileSync(expectFile, "utf8")) as { require?: { must_call?: string[] } };
    expectJson.require = { ...expectJson.require, must_call: [...(expectJson.require?.must_call ?? []), "run_command"] };
    fs.writeFileSync(expectFile, JSON.stringify(expectJson, null, 2));
    const out2 = path.join(work, "captured-edited");
    const r2 = await client(["eval", "run", caseDir, "--output", out2]);
    expect(r2.code).toBe(1);
    const c2 = readReport(out2).cases[0]!;
    expect(c2.verdict).toBe("failed");
    expect(c2.status).toBe("completed");
    expect(c2.rules.filter((x) => !x.passed).map((x) => x.rule)).toEqual(["must_call"]);
    expect(r2.stdout + r2.stderr).toContain("must_call");
  });
});

describe("release gate over real reports", () => {
  it("allows the same suite again, asks for review when a replay suite spends more tool calls, and blocks a deliberately worse replay suite", async () => {
    const canonical = replayOf("replay.json");
    const empty = replayOf("replays/always-empty.json");
    // the canonical fix with three extra reads: still completes, but spends more tool calls
    const reads = [1, 2, 3].map((i) => ({
      kind: "tool",
      call: { call_id: `call_extra_read_${i}`, name: "read_file", arguments: { path: "src/linkcheck.js" } },
    }));
    const chatty = { ...canonical, decisions: [...reads, ...canonical.decisions] };
    // the shipped expectations, with room for more tool calls: spending more is the gate's question here, not the case's
    const fixExpect = { ...shippedExpect("linkcheck-canonical"), limits: { max_tool_calls: 20, max_turns: 30, max_seconds: 600 } };
    const base = { "lc-fix": { replay: canonical, expect: fixExpect }, "lc-empty": { replay: empty, expect: shippedExpect("linkcheck-always-empty") } };
    const runSuite = async (name: string, cases: typeof base) => {
      const out = path.join(work, `gate-${name}`);
      await client(["eval", "run", suite(name, cases), "--output", out, "--concurrency", "2"]);
      return path.join(out, "eval-report.json");
    };
    const baseline = await runSuite("baseline", base);
    expect(verdicts(readReport(path.dirname(baseline)))).toEqual({ "lc-empty": "passed", "lc-fix": "passed" });
    // the same cases (so the same versions), other replays: the gate compares exactly this
    const more = await runSuite("chatty", { ...base, "lc-fix": { replay: chatty, expect: fixExpect } });
    expect(verdicts(readReport(path.dirname(more)))).toEqual({ "lc-empty": "passed", "lc-fix": "passed" });
    const worse = await runSuite("worse", { ...base, "lc-fix": { replay: empty, expect: fixExpect } });
    expect(verdicts(readReport(path.dirname(worse)))).toEqual({ "lc-empty": "passed", "lc-fix": "failed" });

    const allow = await client(["gate", "--report", baseline, "--baseline", baseline]);
    expect(allow.code, allow.stdout + allow.stderr).toBe(0);
    expect(allow.stdout).toContain("allow");

    const worseGate = await client(["gate", "--report", worse, "--baseline", baseline]);
    expect(worseGate.code, worseGate.stdout + worseGate.stderr).toBe(11);
    expect(worseGate.stdout).toContain("block");

    const moreGate = await client(["gate", "--report", more, "--baseline", baseline, "--json"]);
    const decided = JSON.parse(moreGate.stdout) as { decision: string; rules: Array<{ rule: string; outcome: string }> };
    expect(decided.decision).toBe("review");
    expect(decided.rules.filter((r) => r.outcome === "review" || r.outcome === "block").map((r) => r.rule)).toEqual(["tool_calls_up"]);
    expect(moreGate.code).toBe(10);
  });
});

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The offline report with no Docker engine (DOCKER_HOST at a socket nobody
 * listens on), as an operator runs it. Group 4's scenarios that claim nothing
 * about isolation must not need a container (issue 14): they run on
 * trusted_local and pass; only the isolation scenario reports unavailable.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "experiments-no-engine-"));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function report(args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/experiments.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, DOCKER_HOST: `unix://${path.join(tmp, "closed.sock")}` },
    encoding: "utf8",
    timeout: 300_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Scenario = { id: string; passed: boolean; observed: unknown; backend?: string };
const LOCAL = ["cancel_and_timeout", "context_under_budget", "path_escape_denied"];

describe("npm run experiments with no reachable engine", () => {
  it("regression: group 4's context, path and cancel scenarios no longer fail runtime_unavailable; they pass on trusted_local, isolation alone is unavailable, exit 2", () => {
    const out = path.join(tmp, "g4");
    const r = report(["--group", "4", "--output", out]);
    // nothing that ran failed; the isolation evidence is missing: 2, not 0 and not 1
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("runtime_unavailable");
    expect(r.stdout).toContain(`on trusted_local (no engine): ${["context_under_budget", "path_escape_denied", "cancel_and_timeout"].join(", ")}`);
    // regression: a passed group printed only its count; each scenario that passed now prints the values its check compared
    expect(r.stdout).toMatch(/^ {2}context_under_budget: budget_bytes=1800 within_budget=true .*view_bytes=\d+/m);
    expect(r.stdout).toMatch(/^ {2}path_escape_denied: code=path_denied outside_content_in_trace=false writes=0$/m);
    expect(r.stdout).toMatch(/^ {2}cancel_and_timeout: status=cancelled cancelled=true deadline_passed=true/m);
    for (const line of r.stdout.split("\n").filter((l) => /^ {2}\w+: /.test(l))) expect(line.length, line).toBeLessThanOrEqual(200);

    const g4 = JSON.parse(fs.readFileSync(path.join(out, "group-4.json"), "utf8"));
    const byId = new Map<string, Scenario>(g4.scenarios.map((s: Scenario) => [s.id, s]));
    for (const id of LOCAL) {
      expect(byId.get(id)?.passed, id).toBe(true);
      expect(byId.get(id)?.backend, id).toBe("trusted_local");
    }
    const iso = byId.get("isolation_report")!;
    expect(iso.observed).toEqual({ available: false, isolation_passed: false, reason: "runtime_unavailable" });
    expect(iso.passed).toBe(false);
    // the container is the report's own backend: a scenario that used it carries no backend field
    expect("backend" in iso).toBe(false);
    expect(g4.non_canonical.backends).toEqual({
      cancel_and_timeout: "trusted_local",
      context_under_budget: "trusted_local",
      isolation_report: "container",
      path_escape_denied: "trusted_local",
    });

    // the canonical file says the same, so its hash is not the hash of a report with an engine
    const canonical = JSON.parse(fs.readFileSync(path.join(out, "offline-canonical.json"), "utf8"));
    const scenarios: Scenario[] = canonical.groups[0].scenarios;
    expect(
      scenarios
        .filter((s) => s.backend === "trusted_local")
        .map((s) => s.id)
        .sort(),
    ).toEqual(LOCAL);
    expect(canonical.environment.backend).toBe("container");
  });

  it("regression: context_under_budget records the compaction numbers, not only booleans, and the same bytes on a second run", () => {
    const again = path.join(tmp, "g4-again");
    expect(report(["--group", "4", "--output", again]).code).toBe(2);
    const ctxOf = (dir: string) =>
      JSON.parse(fs.readFileSync(path.join(dir, "group-4.json"), "utf8")).scenarios.find((s: Scenario) => s.id === "context_under_budget").observed;
    const o = ctxOf(again);
    expect(o.budget_bytes).toBe(1800);
    expect(o.view_bytes).toBeGreaterThan(0);
    expect(o.view_bytes).toBeLessThanOrEqual(1800);
    // compaction had something to do: the full history does not fit
    expect(o.uncompacted_bytes).toBeGreaterThan(1800);
    expect(o.groups.dropped).toBeGreaterThan(0);
    expect(o.dropped_call_ids).toContain("call_03_red");
    expect(o.pinned).toEqual({ last_failure_call_id: "call_03_red", last_failure_kept: false });
    expect(typeof o.summary_level).toBe("number");
    expect(fs.readFileSync(path.join(again, "offline-canonical.json"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "g4", "offline-canonical.json"), "utf8"));
  });

  it("groups that need the container keep reporting runtime_unavailable without an engine (exit 2)", () => {
    const out = path.join(tmp, "g2");
    const r = report(["--group", "2", "--output", out]);
    expect(r.code).toBe(2);
    const g2 = JSON.parse(fs.readFileSync(path.join(out, "group-2.json"), "utf8"));
    for (const s of g2.scenarios as Scenario[]) {
      expect(s.observed, s.id).toEqual({ error: "runtime_unavailable" });
      expect(s.passed).toBe(false);
      expect("backend" in s).toBe(false);
    }
  });
});

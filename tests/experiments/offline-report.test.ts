import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The offline report as an operator runs it (`node --import tsx scripts/experiments.ts`,
 * which is what `npm run experiments` calls), in real processes against the real
 * engine. Two independent runs must give byte-identical offline-canonical.json.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: string;

function report(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/experiments.ts", ...args], { cwd: ROOT, env, encoding: "utf8", timeout: 900_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const sha = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "experiments-test-"));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("npm run experiments", () => {
  // two full reports: generous, since other work may share the 2 cores
  it("two independent runs of every group pass and give byte-identical offline-canonical.json", { timeout: 1_800_000 }, () => {
    const a = report(["--group", "all", "--output", path.join(tmp, "a")]);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    const b = report(["--group", "all", "--output", path.join(tmp, "b")]);
    expect(b.code).toBe(0);
    const ha = sha(path.join(tmp, "a", "offline-canonical.json"));
    const hb = sha(path.join(tmp, "b", "offline-canonical.json"));
    expect(ha).toBe(hb);
    expect(a.stdout).toContain(`offline-canonical.json sha256 ${ha}`);

    const files = fs.readdirSync(path.join(tmp, "a")).sort();
    expect(files).toEqual(["environment.json", "group-1.json", "group-2.json", "group-3.json", "group-4.json", "group-5.json", "offline-canonical.json"]);
    const canonical = JSON.parse(fs.readFileSync(path.join(tmp, "a", "offline-canonical.json"), "utf8"));
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

  it("refuses an existing output dir without --replace and leaves it untouched", () => {
    const dir = path.join(tmp, "existing");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "keep.txt"), "earlier evidence\n");
    const r = report(["--group", "1", "--output", dir]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain("--replace");
    expect(fs.readdirSync(dir)).toEqual(["keep.txt"]);
  });

  it("--replace keeps the old report as DIR.previous-N and writes a new one", () => {
    const dir = path.join(tmp, "replaced");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "keep.txt"), "first\n");
    fs.mkdirSync(`${dir}.previous-1`);
    const r = report(["--group", "1", "--output", dir, "--replace"]);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(`${dir}.previous-2`, "keep.txt"), "utf8")).toBe("first\n");
    expect(fs.readdirSync(dir).sort()).toEqual(["environment.json", "group-1.json", "offline-canonical.json"]);
  });

  it("with no reachable engine: isolation available=false, reason runtime_unavailable, exit 2", () => {
    const r = report(["--group", "4", "--output", path.join(tmp, "no-engine")], {
      ...process.env,
      DOCKER_HOST: `unix://${path.join(tmp, "no-such-docker.sock")}`,
    });
    expect(r.code).toBe(2);
    const g4 = JSON.parse(fs.readFileSync(path.join(tmp, "no-engine", "group-4.json"), "utf8"));
    const iso = g4.scenarios.find((s: { id: string }) => s.id === "isolation_report");
    expect(iso.observed).toEqual({ available: false, isolation_passed: false, reason: "runtime_unavailable" });
    expect(iso.passed).toBe(false);
  });

  it("rejects unknown options with a usage error", () => {
    const r = report(["--group", "6", "--output", path.join(tmp, "x")]);
    expect(r.code).toBe(64);
    expect(fs.existsSync(path.join(tmp, "x"))).toBe(false);
  });
});

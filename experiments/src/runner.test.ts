import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { findHostPath, stableStringify } from "./canonical.js";
import { EXIT, main, parseArgs } from "./cli.js";
import { prepareOutputDir } from "./output-dir.js";
import { writeReport } from "./report.js";
import { runGroup, scratchDirIn } from "./runner.js";
import type { GroupDefinition, Json, Scenario } from "./types.js";

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "experiments-unit-"));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const base = () => ({
  repoRoot: "/work/main",
  executor: null,
  familyExecutor: () => Promise.reject(new Error("no engine in this test")),
  engine: { available: false, reason: "runtime_unavailable", runtime: "runc", image_digest: null, engine_version: null },
  imageLockPath: null,
  dockerEnv: {},
  nodeExecPath: "node",
});
const scenario = (over: Partial<Scenario>): Scenario => ({
  id: "s",
  title: "t",
  expected: { ok: true },
  criterion: "c",
  does_not_prove: "d",
  run: async () => ({ ok: true }),
  ...over,
});
const group = (...scenarios: Scenario[]): GroupDefinition => ({ id: "group-2", title: "g", scenarios });
const deps = () => ({ now: () => 0, scratchDir: scratchDirIn(path.join(tmp, "scratch")) });

describe("runGroup", () => {
  it("passes only when the observation equals the expectation", async () => {
    const out = await runGroup(group(scenario({ id: "a" }), scenario({ id: "b", run: async () => ({ ok: false }) })), base(), deps());
    expect(out.scenarios.map((s) => [s.id, s.passed])).toEqual([
      ["a", true],
      ["b", false],
    ]);
    expect(out.passed).toBe(false);
  });

  it("a throwing scenario is observed as its error code, never as the expected value", async () => {
    const out = await runGroup(
      group(
        scenario({
          run: async () => {
            throw new MiniAgentError("runtime_unavailable", "no engine at /var/run/docker.sock");
          },
        }),
      ),
      base(),
      deps(),
    );
    expect(out.scenarios[0]).toMatchObject({ observed: { error: "runtime_unavailable" }, passed: false });
  });

  it("scratch paths are replaced by a placeholder; any other host path refuses the observation", async () => {
    const out = await runGroup(
      group(
        scenario({ id: "scratch", expected: { where: "<scratch>/ws" }, run: async (ctx) => ({ where: path.join(ctx.scratch, "ws") }) }),
        scenario({ id: "leak", expected: { where: "x" }, run: async () => ({ where: "/home/someone/secret" }) }),
      ),
      base(),
      deps(),
    );
    expect(out.scenarios[0]).toMatchObject({ observed: { where: "<scratch>/ws" }, passed: true });
    expect(out.scenarios[1]).toMatchObject({ observed: { error: "host_path_in_observation" }, passed: false });
  });

  it("a custom check decides instead of equality", async () => {
    const out = await runGroup(
      group(scenario({ expected: { max: 5 }, run: async () => ({ n: 3 }), check: (o) => (o as { n: number }).n <= 5 })),
      base(),
      deps(),
    );
    expect(out.scenarios[0]!.passed).toBe(true);
  });
});

describe("backend per scenario", () => {
  const withEngine = () => ({ ...base(), engine: { ...base().engine, available: true, reason: null } });
  const seen = (id: string, runsWithoutEngine?: boolean) =>
    scenario({ id, runsWithoutEngine, expected: null, run: async (ctx) => ctx.backend, check: () => true });

  it("without an engine only a scenario that claims no isolation moves to trusted_local, and says so", async () => {
    const out = await runGroup(group(seen("local", true), seen("container")), base(), deps());
    expect(out.scenarios.map((s) => [s.id, s.observed, s.backend])).toEqual([
      ["local", "trusted_local", "trusted_local"],
      ["container", "container", undefined],
    ]);
    expect(out.backends).toEqual({ local: "trusted_local", container: "container" });
    expect(out.unavailable).toEqual(["container"]);
  });

  it("regression: with an engine every scenario stays on the container and carries no backend field (canonical bytes unchanged)", async () => {
    const out = await runGroup(group(seen("local", true), seen("container")), withEngine(), deps());
    expect(out.scenarios.map((s) => [s.observed, "backend" in s])).toEqual([
      ["container", false],
      ["container", false],
    ]);
    expect(out.unavailable).toEqual([]);
  });

  it("a failure of a scenario that ran is a measured failure; one that found no engine only makes the report unavailable", async () => {
    const env = { canonical: {}, volatile: {} };
    const failing = scenario({ id: "ran", runsWithoutEngine: true, run: async () => ({ ok: false }) });
    const dirA = path.join(tmp, "a");
    const dirB = path.join(tmp, "b");
    await fs.mkdir(dirA);
    await fs.mkdir(dirB);
    const a = await writeReport(dirA, [await runGroup(group(failing, seen("needs")), base(), deps())], env);
    expect([a.measuredFailure, a.unavailable]).toEqual([true, true]);
    const b = await writeReport(
      dirB,
      [await runGroup(group(scenario({ id: "ran", runsWithoutEngine: true }), scenario({ id: "needs" })), base(), deps())],
      env,
    );
    expect([b.passed, b.measuredFailure, b.unavailable]).toEqual([true, false, true]);
  });
});

describe("scenario details", () => {
  it("what a scenario records beyond its observation goes to the group file's non_canonical.details, and the canonical bytes stay those of a scenario that records nothing", async () => {
    const env = { canonical: {}, volatile: {} };
    const plain = scenario({ id: "iso" });
    const detailed = scenario({
      id: "iso",
      run: async (ctx) => {
        ctx.recordDetails({ probes: [{ id: "pooled_indistinguishable", passed: true, observed: { at: "/tmp/x" } }] });
        return { ok: true };
      },
    });
    const dirA = path.join(tmp, "a");
    const dirB = path.join(tmp, "b");
    await fs.mkdir(dirA);
    await fs.mkdir(dirB);
    const a = await writeReport(dirA, [await runGroup(group(plain), base(), deps())], env);
    const b = await writeReport(dirB, [await runGroup(group(detailed), base(), deps())], env);
    expect(b.canonicalSha256).toBe(a.canonicalSha256);
    const groupFile = JSON.parse(await fs.readFile(path.join(dirB, "group-2.json"), "utf8"));
    expect(groupFile.non_canonical.details).toEqual({ iso: { probes: [{ id: "pooled_indistinguishable", passed: true, observed: { at: "/tmp/x" } }] } });
    expect(groupFile.scenarios[0].observed).toEqual({ ok: true });
  });
});

describe("canonical output", () => {
  it("sorts keys at every depth and ends with a newline, whatever the insertion order", () => {
    expect(stableStringify({ b: 1, a: { d: 2, c: [{ z: 1, y: 2 }] } })).toBe(stableStringify({ a: { c: [{ y: 2, z: 1 }], d: 2 }, b: 1 }));
    expect(stableStringify({ a: 1 }).endsWith("}\n")).toBe(true);
  });

  // offline-report.test.ts proves two runs byte-identical from one full run plus this: the renderer adds nothing of its own run
  it("two renders of the same observations write byte-identical canonical files, whatever scratch dirs, wall-clock, details, key order and volatile facts differ", async () => {
    const render = async (name: string, clock: number, detail: string, keysReversed: boolean, volatile: Record<string, Json>) => {
      const at = (ctx: { scratch: string }) => path.join(ctx.scratch, "ws");
      const g = group(
        scenario({
          id: "where",
          expected: { where: "<scratch>/ws", n: 2 },
          run: async (ctx) => {
            ctx.recordDetails({ detail });
            return keysReversed ? { n: 2, where: at(ctx) } : { where: at(ctx), n: 2 };
          },
        }),
        scenario({ id: "measured", expected: { max: 5 }, run: async () => ({ n: 3, max: 5 }), check: (o) => (o as { n: number }).n <= 5 }),
      );
      let t = clock;
      const out = await runGroup(g, base(), { now: () => (t += clock), scratchDir: scratchDirIn(path.join(tmp, `scratch-${name}`)) });
      const dir = path.join(tmp, name);
      await fs.mkdir(dir);
      const written = await writeReport(dir, [out], { canonical: { node: "v20" }, volatile });
      return { written, bytes: await fs.readFile(path.join(dir, "offline-canonical.json")) };
    };
    const a = await render("a", 1, "first", false, { cpus: 2, engine_version: "27.0" });
    const b = await render("b", 7, "second", true, { cpus: 8, engine_version: "28.1" });
    expect(a.written.passed).toBe(true);
    expect(b.bytes.equals(a.bytes)).toBe(true);
    expect(b.written.canonicalSha256).toBe(a.written.canonicalSha256);
    expect(a.written.canonicalSha256).toBe(createHash("sha256").update(a.bytes).digest("hex"));
  });

  it("finds absolute host paths anywhere in a value", () => {
    expect(findHostPath({ a: ["ok", { b: "cwd=/tmp/x/y" }] })).toBe("cwd=/tmp/x/y");
    expect(findHostPath({ a: "src/linkcheck.js", b: "<scratch>/ws" })).toBeNull();
  });
});

describe("prepareOutputDir", () => {
  it("refuses an existing dir without replace and changes nothing", async () => {
    const dir = path.join(tmp, "out");
    await fs.mkdir(dir);
    await expect(prepareOutputDir(dir, false)).rejects.toMatchObject({ code: "invalid_request" });
    expect(await fs.readdir(tmp)).toEqual(["out"]);
  });

  it("with replace, moves the old dir to the first free DIR.previous-N", async () => {
    const dir = path.join(tmp, "out");
    await fs.mkdir(dir);
    await fs.mkdir(`${dir}.previous-1`);
    expect(await prepareOutputDir(dir, true)).toBe(`${dir}.previous-2`);
    expect((await fs.readdir(tmp)).sort()).toEqual(["out", "out.previous-1", "out.previous-2"]);
    expect(await fs.readdir(dir)).toEqual([]);
  });
});

describe("parseArgs", () => {
  it("maps --group N to group-N and all to every group", () => {
    expect(parseArgs(["--group", "3", "--output", "o"])).toMatchObject({ groups: ["group-3"], output: "o", replace: false });
    expect(parseArgs(["--output", "o", "--replace"])).toMatchObject({ groups: ["group-1", "group-2", "group-3", "group-4", "group-5"], replace: true });
  });

  it("fails loudly on unknown options, unknown groups and a missing --output", () => {
    expect(parseArgs(["--output", "o", "--fast"])).toHaveProperty("error");
    expect(parseArgs(["--group", "9", "--output", "o"])).toHaveProperty("error");
    expect(parseArgs(["--group", "5", "--output", "o"])).toMatchObject({ groups: ["group-5"] });
    expect(parseArgs(["--group", "1"])).toHaveProperty("error");
    expect(parseArgs(["--output", "o", "--image-lock"])).toHaveProperty("error");
  });

  it("--image-lock FILE names the lock whose images are pinned instead of built; none by default", () => {
    expect(parseArgs(["--output", "o", "--image-lock", "lock.json"])).toMatchObject({ imageLock: "lock.json" });
    expect(parseArgs(["--output", "o"])).toMatchObject({ imageLock: null });
  });

  it("a missing or corrupt --image-lock is bad usage (64), refused before the output dir is made", async () => {
    const io = (errs: string[]) => ({
      env: {},
      cwd: tmp,
      repoRoot: tmp,
      nodeVersion: "v20",
      nodeExecPath: "node",
      platform: "linux",
      cpus: 1,
      stdout: () => {},
      stderr: (l: string) => errs.push(l),
    });
    const errs: string[] = [];
    expect(await main(["--output", "out", "--image-lock", "nope.json"], io(errs))).toBe(EXIT.usage);
    await fs.writeFile(path.join(tmp, "bad.json"), "{not json");
    expect(await main(["--output", "out", "--image-lock", "bad.json"], io(errs))).toBe(EXIT.usage);
    expect(errs).toHaveLength(2);
    expect(errs[0]).toContain("no such file");
    expect(await fs.readdir(tmp)).toEqual(["bad.json"]);
  });
});

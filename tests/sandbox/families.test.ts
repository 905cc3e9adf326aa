// Real Docker: the python and go image families (issue 11). Builds both images into a
// fresh state dir (the engine's cache makes later builds quick), runs trivial tests in
// fresh sandboxes through the executor, and runs the isolation probes ONCE per family per
// runtime. SLOW: each probe run takes 30-90 s; builds on a cold cache take minutes.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { readIsolationReportSummary } from "../../daemon/src/gate/probe-report.js";
import { checkLiveGate } from "../../daemon/src/gate/live-gate.js";
import { sandboxIsolationFacts } from "../../daemon/src/gate/sandbox-facts.js";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { hostConfigHash } from "../../daemon/src/sandbox/config-hash.js";
import { readImageLock, recordImage } from "../../daemon/src/sandbox/image-lock.js";
import { hostInstallTools } from "../../daemon/src/sandbox/install-sandbox.js";
import { inspectProbes } from "../../probes/host-probes.js";
import { installSandboxProbes } from "../../probes/install-probes.js";
import { runIsolationProbes } from "../../probes/run.js";
import type { IsolationReport } from "../../probes/types.js";
import { buildFamily } from "../../sandbox-image/image-builder.js";
import { availableRuntimes, docker, removeWithPrefix, runIdPrefix, workspace } from "./helpers.js";

const FAMILIES = ["python", "go"] as const;
const runtimes = await availableRuntimes();
let stateDir: string;
let lockPath: string;
const prefix = runIdPrefix("families");
const dirs: string[] = [];

beforeAll(async () => {
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-families-"));
  lockPath = statePath(stateDir, "imageLock");
  for (const family of FAMILIES) {
    const built = await buildFamily(docker, family);
    await recordImage(lockPath, family, { tag: built.tag, digest: built.digest, built_at: new Date().toISOString() });
  }
}, 900_000);

afterAll(async () => {
  await removeWithPrefix(prefix);
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  await fs.rm(stateDir, { recursive: true, force: true });
});

async function runIn(family: string, files: Record<string, string>, argv: string[], runtime: "runc" | "runsc" = "runc", env?: Record<string, string>) {
  const ws = await workspace(files);
  dirs.push(ws);
  const envAllowlist = env && [...resolveSandboxConfig({}).envAllowlist, ...Object.keys(env)];
  const ex = new DockerExecutor({ lockPath, config: { imageFamily: family, runtime, ...(envAllowlist && { envAllowlist }) } });
  const res = await ex.run({ runId: `${prefix}-${family}`, purpose: "candidate", argv, workspaceDir: ws, timeoutMs: 180_000, ...(env && { env }) });
  return { ...res, out: res.stdout + res.stderr };
}

const PY_CALC = { "calc.py": "def add(a, b):\n    return a + b\n" };
// pytest, then what it left in the workspace and what the image lacks, all in one fresh sandbox (there is no shell)
const PY_RUN_AND_LOOK =
  "import os, subprocess, sys, json\n" +
  "r = subprocess.run([sys.executable, '-m', 'pytest', '-q'])\n" +
  "left = sorted(p for p, _, fs in os.walk('.') for p in [p] + [os.path.join(p, f) for f in fs])\n" +
  "print(json.dumps({'left': left, 'sh': os.path.exists('/bin/sh'), 'pip': subprocess.run([sys.executable, '-m', 'pip', '--version'], capture_output=True).returncode}))\n" +
  "sys.exit(r.returncode)\n";

describe("python family", () => {
  it("pytest passes a trivial test in a fresh sandbox, writes nothing into the workspace, and the image has no shell and no pip", async () => {
    const res = await runIn(
      "python",
      { ...PY_CALC, "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n", "look.py": PY_RUN_AND_LOOK },
      ["python3", "look.py"],
    );
    expect(res.exit_code, res.out).toBe(0);
    expect(res.stdout).toMatch(/1 passed/);
    const look = JSON.parse(res.stdout.trim().split("\n").pop()!) as { left: string[]; sh: boolean; pip: number };
    // no .pytest_cache, no __pycache__: caches go to /tmp, bytecode is not written
    expect(look.left).toEqual([".", "./calc.py", "./look.py", "./test_calc.py"]);
    expect(look.sh).toBe(false);
    expect(look.pip).not.toBe(0);
  });

  it("a failing test fails (exit 1), so a pass above means something", async () => {
    const res = await runIn("python", { ...PY_CALC, "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 5\n" }, [
      "python3",
      "-m",
      "pytest",
      "-q",
    ]);
    expect(res.exit_code, res.out).toBe(1);
    expect(res.stdout).toMatch(/1 failed/);
  });
});

const GO_MOD = "module example.com/tiny\n\ngo 1.19\n";
const GO_ADD = "package tiny\n\nfunc Add(a, b int) int { return a + b }\n";
const goTest = (want: number) =>
  `package tiny\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != ${want} {\n\t\tt.Fatal("wrong sum")\n\t}\n}\n`;

describe("go family", () => {
  it("go test ./... passes a trivial module in a fresh sandbox, and fails a failing test", async () => {
    const ok = await runIn("go", { "go.mod": GO_MOD, "add.go": GO_ADD, "add_test.go": goTest(5) }, ["go", "test", "./..."]);
    expect(ok.exit_code, ok.out).toBe(0);
    expect(ok.stdout).toMatch(/^ok\s+example\.com\/tiny/m);
    const bad = await runIn("go", { "go.mod": GO_MOD, "add.go": GO_ADD, "add_test.go": goTest(6) }, ["go", "test", "./..."]);
    expect(bad.exit_code, bad.out).toBe(1);
    expect(bad.out).toMatch(/wrong sum/);
  });

  // `go test -x` prints each tool it runs. From an empty GOCACHE it vets every dependency for
  // its facts (testing, fmt, strings, ... over 30 runs of vet); from the image's seed only the
  // package under test is vetted.
  const vetRuns = (stderr: string) => stderr.split("\n").filter((l) => /\/pkg\/tool\/[^/]+\/vet\s/.test(l)).length;
  const GO_FMT_TEST =
    'package tiny\n\nimport (\n\t"fmt"\n\t"strings"\n\t"testing"\n)\n\nfunc TestAdd(t *testing.T) {\n\tif fmt.Sprint(Add(2, 3)) != strings.TrimSpace(" 5 ") {\n\t\tt.Fatal("wrong sum")\n\t}\n}\n';

  it("a sandbox's go test starts from the image's build cache of the standard library: only the package under test is vetted", async () => {
    for (const runtime of runtimes) {
      const res = await runIn("go", { "go.mod": GO_MOD, "add.go": GO_ADD, "add_test.go": GO_FMT_TEST }, ["go", "test", "-x", "-count=1", "./..."], runtime);
      expect(res.exit_code, res.out).toBe(0);
      expect(vetRuns(res.stderr), `${runtime}: ${res.stderr}`).toBe(1);
    }
    // the same command with the cache moved to an empty folder vets the dependencies too: the count above means something
    const cold = await runIn("go", { "go.mod": GO_MOD, "add.go": GO_ADD, "add_test.go": GO_FMT_TEST }, ["go", "test", "-x", "-count=1", "./..."], "runc", {
      GOCACHE: "/tmp/empty-cache",
    });
    expect(cold.exit_code, cold.out).toBe(0);
    expect(vetRuns(cold.stderr)).toBeGreaterThan(10);
  });

  it("each command in a warm go sandbox gets its own fresh copy of the seed: one that wiped the cache and left a file leaves nothing for the next", async () => {
    const ws = await workspace({
      "go.mod": GO_MOD,
      "add.go": GO_ADD,
      "add_test.go": GO_FMT_TEST,
      "wipe/main.go":
        'package main\n\nimport "os"\n\nfunc main() {\n\tif err := os.RemoveAll("/tmp/go-cache"); err != nil {\n\t\tpanic(err)\n\t}\n\tif err := os.WriteFile("/tmp/left", []byte("x"), 0o644); err != nil {\n\t\tpanic(err)\n\t}\n}\n',
      "look/main.go":
        'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\t_, left := os.Stat("/tmp/left")\n\t_, cache := os.Stat("/tmp/go-cache/README")\n\tfmt.Printf("{\\"left\\": %t, \\"cache\\": %t}\\n", left == nil, cache == nil)\n}\n',
    });
    dirs.push(ws);
    const session = await new DockerExecutor({ lockPath, config: { imageFamily: "go", runtime: "runc" } }).openSession(`${prefix}-seed`);
    try {
      const exec = (argv: string[]) => session.exec({ purpose: "candidate", argv, workspaceDir: ws, timeoutMs: 180_000 });
      const wiped = await exec(["go", "run", "./wipe"]);
      expect(wiped.exit_code, wiped.stderr).toBe(0);
      const next = await exec(["go", "test", "-x", "-count=1", "."]);
      expect(next.exit_code, next.stderr).toBe(0);
      expect(vetRuns(next.stderr), next.stderr).toBe(1);
      const look = await exec(["go", "run", "./look"]);
      expect(look.exit_code, look.stderr).toBe(0);
      expect(JSON.parse(look.stdout)).toEqual({ left: false, cache: true });
    } finally {
      await session.close();
    }
  });

  it("a module with an unvendored dependency fails with a clear message and never tries the network", async () => {
    const res = await runIn(
      "go",
      {
        "go.mod": "module example.com/dep\n\ngo 1.19\n\nrequire github.com/google/go-cmp v0.5.9\n",
        "go.sum":
          "github.com/google/go-cmp v0.5.9 h1:O2Tfq5qg4qc4AmwVlvv0oLiVAGB7enBSJ2x2DqQFi38=\n" +
          "github.com/google/go-cmp v0.5.9/go.mod h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=\n",
        "dep.go": 'package dep\n\nimport "github.com/google/go-cmp/cmp"\n\nvar Same = cmp.Equal\n',
        "dep_test.go": 'package dep\n\nimport "testing"\n\nfunc TestSame(t *testing.T) {}\n',
      },
      ["go", "test", "./..."],
    );
    expect(res.exit_code).not.toBe(0);
    expect(res.out).toMatch(/module lookup disabled by GOPROXY=off/);
    // GOPROXY=off: no proxy, no VCS and no sum database is asked (there is no network either)
    expect(res.out).not.toMatch(/dial tcp|i\/o timeout|exec: "git"|sum\.golang\.org/);
  });

  it("a vendored dependency builds without any lookup", async () => {
    const res = await runIn(
      "go",
      {
        "go.mod": "module example.com/app\n\ngo 1.19\n\nrequire example.org/dep v1.0.0\n",
        "vendor/modules.txt": "# example.org/dep v1.0.0\n## explicit\nexample.org/dep\n",
        "vendor/example.org/dep/dep.go": "package dep\n\nfunc Two() int { return 2 }\n",
        "app.go": 'package app\n\nimport "example.org/dep"\n\nfunc Four() int { return dep.Two() * 2 }\n',
        "app_test.go": 'package app\n\nimport "testing"\n\nfunc TestFour(t *testing.T) {\n\tif Four() != 4 {\n\t\tt.Fatal("no")\n\t}\n}\n',
      },
      ["go", "test", "./..."],
    );
    expect(res.exit_code, res.out).toBe(0);
    expect(res.stdout).toMatch(/^ok\s+example\.com\/app/m);
  });
});

async function ociSeccompRegistered(): Promise<boolean> {
  const info = (await docker.info()) as { Runtimes?: Record<string, { runtimeArgs?: string[] }> };
  return (info.Runtimes?.runsc?.runtimeArgs ?? []).includes("--oci-seccomp");
}

describe.each(FAMILIES.flatMap((f) => runtimes.map((r) => [f, r] as const)))(
  "isolation probes for the %s family on %s (slow: one full probe run)",
  (family, runtime) => {
    let report: IsolationReport;

    beforeAll(async () => {
      const r = await runIsolationProbes({ stateDir, config: { runtime, imageFamily: family }, docker, hostEnv: { ...process.env } });
      expect(r.available).toBe(true);
      report = r as IsolationReport;
    }, 600_000);

    it("every probe passes and the report names its family", async () => {
      expect(report.image_family).toBe(family);
      expect(report.probes.length).toBeGreaterThanOrEqual(30);
      const failed = report.probes.filter((p) => !p.passed).map((p) => p.id);
      const tolerated = runtime === "runsc" && !(await ociSeccompRegistered()) ? ["seccomp_mode", "seccomp_syscalls"] : [];
      expect(failed, JSON.stringify(report.probes.filter((p) => !p.passed))).toEqual(tolerated);
    });

    // Regression: only node's install sandbox was probed; pip's (python) and Go's (go) installs ran in unprobed sandboxes.
    it("proves this family's own install sandbox under runc (pip for python, Go for go): its mounts, and the egress check in the image's own language", () => {
      const byId = Object.fromEntries(report.probes.filter((p) => p.id.startsWith("install_sandbox.")).map((p) => [p.id.slice("install_sandbox.".length), p]));
      // no install sandbox under gVisor; none for pip on a host without Debian's pip (the daemon makes none either)
      if (runtime === "runsc" || (family === "python" && !hostInstallTools(process.execPath, undefined)?.pipRoot)) {
        expect(Object.keys(byId)).toEqual([]);
        return;
      }
      for (const id of ["host_inspect", "inside_report", "writable_mounts", "network_interfaces", "outbound_tcp", "docker_socket", "spawned_tree"])
        expect(byId[id]?.passed, id).toBe(true);
      expect((byId.writable_mounts!.observed as { user_writable: string[] }).user_writable).toEqual(
        family === "python"
          ? ["/opt/mini-agent-install-cache", "/tmp", "/workspace", "/workspace/.venv"]
          : ["/opt/mini-agent-install-cache", "/opt/mini-agent-install-out", "/tmp", "/workspace"],
      );
      expect((byId.docker_socket!.observed as { sockets: string[] }).sockets).toEqual(["/opt/mini-agent-egress/proxy.sock"]);
      // what the check printed in this image (python3, or Go built there), as the host judged it
      expect((byId.egress_allowed!.observed as { check: unknown }).check).toEqual({ status: 200, body_is_nonce: true });
      const refused = byId.egress_refused!.observed as { check: unknown; refusals: string[]; logged: number; dialled: string[] };
      expect(refused).toMatchObject({ check: { connect: 403, get: 403 }, refusals: ["CONNECT unlisted.invalid:443", "GET unlisted.invalid:80"], logged: 2 });
      expect(refused.dialled.some((d) => d.startsWith("unlisted"))).toBe(false);
      const direct = byId.egress_direct!.observed as Record<string, string>;
      expect(Object.keys(direct)).toHaveLength(3);
      expect(Object.values(direct).filter((v) => v === "connected")).toEqual([]);
    });

    it("the probe run used the HostConfig of this family's candidate runs: same hash, and a candidate container is exactly that HostConfig", async () => {
      const ex = new DockerExecutor({ lockPath, config: { runtime, imageFamily: family } });
      expect(hostConfigHash(ex.config)).toBe(report.host_config_hash);
      const ws = await workspace({ "x.txt": "x" });
      dirs.push(ws);
      let checks: ReturnType<typeof inspectProbes> = [];
      const res = await ex.runFresh(
        { runId: `${prefix}-hc-${family}`, purpose: "candidate", argv: ["/opt/mini-agent/syscall-probe"], workspaceDir: ws, timeoutMs: 60_000 },
        {
          onStarted: async (box) => {
            const info = (await box.inspect()) as Parameters<typeof inspectProbes>[0];
            const vols = await Promise.all((info.Mounts ?? []).flatMap((m) => (m.Name ? [docker.getVolume(m.Name).inspect()] : [])));
            checks = inspectProbes(info, ex.config, report.image_digest, vols);
          },
        },
      );
      expect(res.exit_code).toBe(0);
      expect(checks.map((c) => [c.id, c.passed])).toEqual([
        ["host_inspect", true],
        ["image_digest", true],
      ]);
    });

    it("the live gate lets a run of this family through on this report, and refuses it for a family with no report", async () => {
      const facts = sandboxIsolationFacts({
        docker,
        sandbox: resolveSandboxConfig({ runtime }),
        sandboxFor: (f) => resolveSandboxConfig({ runtime, imageFamily: f }),
        lockPath,
        readReport: (key) => readIsolationReportSummary(stateDir, key),
      });
      const v = await checkLiveGate({ backend: "container", facts, family });
      expect(v, JSON.stringify(v)).toMatchObject({
        ok: true,
        key: { image_family: family, image_digest: report.image_digest, host_config_hash: report.host_config_hash },
      });
      // node is not built in this state dir at all: its run is refused whatever the other families' reports say
      expect(await checkLiveGate({ backend: "container", facts, family: "node" })).toMatchObject({ ok: false, reason: "image_missing" });
    });
  },
);

describe("the install sandbox's probes can fail", () => {
  it("a proxy that does not let the allowed host through fails egress_allowed in the go install sandbox (and egress_refused: it refused more than the unlisted name)", async () => {
    const tools = hostInstallTools(process.execPath, undefined);
    expect(tools).not.toBeNull();
    const ws = await workspace({ README: "probe workspace\n" });
    dirs.push(ws);
    const config = resolveSandboxConfig({ imageFamily: "go" });
    const digest = (await readImageLock(lockPath))!.images.go!.digest;
    const inside = { nonce: "f".repeat(32), ws, canary: "not-the-canary", canaryFileName: "none", stateDir };
    // the broken configuration: an allowlist without the one host the install may reach
    const rs = await installSandboxProbes({ docker, config, digest, kind: "go", tools: tools!, allow: [] }, inside);
    const passed = Object.fromEntries(rs.map((r) => [r.id, r.passed]));
    expect(passed["install_sandbox.egress_allowed"]).toBe(false);
    expect(passed["install_sandbox.egress_refused"]).toBe(false);
    expect((rs.find((r) => r.id === "install_sandbox.egress_allowed")!.observed as { check: unknown }).check).toEqual({ status: 403, body_is_nonce: false });
    // the rest of this sandbox is sound: the same run passes what does not depend on the allowlist
    for (const id of ["host_inspect", "inside_report", "writable_mounts", "docker_socket", "egress_direct"])
      expect(passed[`install_sandbox.${id}`], id).toBe(true);
  }, 120_000);
});

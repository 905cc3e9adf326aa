import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { TaskSpec } from "../daemon/src/contracts/task-spec.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { fileBaselineTestStore, NO_BASELINE_STORE } from "../daemon/src/verifier/baseline-tests.js";
import { verify } from "../daemon/src/verifier/verify.js";
import { captureBaseline } from "../daemon/src/workspace/baseline.js";
import { DEFAULT_JUNIT_REPORT_PATH } from "../daemon/src/tools/parsers/report-file.js";

/**
 * `npm run bench:verifier [-- --runs N] [--tests N] [--state-dir DIR]`
 * In ONE run, side by side, the median wall time of a pytest suite of N tests
 * (default 2,000) as: the host's own run of it; the Verifier with the baseline's
 * result cached (the result's tests only: what every verification after the
 * first costs); the Verifier's first verification (the baseline's tests and the
 * result's, each in a fresh sandbox). Targets: cached <= 1.3x host, first <= 2.5x.
 * A benchmark that prints numbers, never a timed test.
 */
function parseArgs(argv: string[]) {
  const o = { runs: 5, tests: 2000, stateDir: undefined as string | undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--tests") o.tests = Number(argv[++i]);
    else if (a === "--state-dir") o.stateDir = argv[++i];
    else throw new Error(`unknown option ${a}; use --runs N, --tests N, --state-dir DIR`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be a positive integer");
  if (!Number.isInteger(o.tests) || o.tests < 10) throw new Error("--tests must be an integer >= 10");
  return o;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A project of `n` tests in 20 files, one of which the "run" fixed (so the result differs from the baseline by one test). */
function project(root: string, n: number): string {
  const ws = path.join(root, "ws");
  fs.mkdirSync(path.join(ws, "src", "pkg"), { recursive: true });
  fs.mkdirSync(path.join(ws, "tests"));
  fs.writeFileSync(
    path.join(ws, "pyproject.toml"),
    '[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
  );
  fs.writeFileSync(path.join(ws, "src", "pkg", "__init__.py"), "");
  fs.writeFileSync(path.join(ws, "src", "pkg", "calc.py"), "def add(a, b):\n    return a - b\n");
  const per = Math.ceil(n / 20);
  for (let f = 0; f < 20; f++) {
    const count = Math.min(per, n - f * per);
    if (count <= 0) break;
    fs.writeFileSync(
      path.join(ws, "tests", `test_m${f}.py`),
      `import pytest\nfrom pkg.calc import add\n\n@pytest.mark.parametrize("i", range(${count}))\ndef test_case(i):\n    assert add(i, 0) == i\n` +
        (f === 0 ? "\ndef test_add():\n    assert add(2, 3) == 5\n" : ""),
    );
  }
  return ws;
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const o = parseArgs(argv);
  const stateDir = resolveStateDir(env, o.stateDir);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-verifier-"));
  try {
    const ws = project(tmp, o.tests);
    const control = path.join(tmp, "control");
    await captureBaseline(ws, control);
    // the run's change: the bug fixed
    fs.writeFileSync(path.join(ws, "src", "pkg", "calc.py"), "def add(a, b):\n    return a + b\n");
    const argv = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1", `--junitxml=${DEFAULT_JUNIT_REPORT_PATH}`];
    const task = TaskSpec.parse({
      schema_version: 1,
      name: "bench",
      task: "fix add",
      writable: ["src/**"],
      test_presets: { tests: { command: argv, files: [], parser: "junit_xml", timeout_seconds: 600 } },
      verify_preset: "tests",
      image_family: "python",
    });
    const ex = new DockerExecutor({ lockPath: statePath(stateDir, "imageLock"), config: { imageFamily: "python" }, docker: createDockerClient(env) });
    await ex.pinnedDigest();
    const hostXml = path.join(tmp, "host.xml");
    const hostArgv = [...argv.slice(0, -1), `--junitxml=${hostXml}`];
    const host = () => {
      const t = performance.now();
      const r = spawnSync(hostArgv[0]!, hostArgv.slice(1), { cwd: ws, stdio: "ignore", env: { ...env, PYTHONDONTWRITEBYTECODE: "1" } });
      if (r.status !== 0) throw new Error(`the host's pytest exited ${r.status}`);
      return performance.now() - t;
    };
    const cacheDir = path.join(tmp, "cache");
    const once = async (store: ReturnType<typeof fileBaselineTestStore>) => {
      const t = performance.now();
      const ev = await verify({
        runId: "bench",
        task,
        workspaceRoot: ws,
        baseline: { runControlDir: control },
        acceptanceDir: null,
        executor: ex,
        baselineTests: store,
      });
      const ms = performance.now() - t;
      if (!ev.passed) throw new Error(`the Verifier did not pass the bench project: ${ev.reason} ${(ev.details ?? []).join("; ")}`);
      return { ms, ev };
    };
    // warm-up: images in the page cache, the cache filled once
    host();
    const warm = await once(fileBaselineTestStore(cacheDir));
    const rounds = { host: [] as number[], cached: [] as number[], first: [] as number[] };
    for (let i = 0; i < o.runs; i++) {
      rounds.host.push(host());
      rounds.cached.push((await once(fileBaselineTestStore(cacheDir))).ms);
      rounds.first.push((await once(NO_BASELINE_STORE)).ms);
    }
    const m = { host: median(rounds.host), verifier_cached: median(rounds.cached), verifier_first: median(rounds.first) };
    const out = {
      tests: warm.ev.tests.discovered,
      compare: warm.ev.tests.compare?.counts,
      runs: o.runs,
      median_ms: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Math.round(v)])),
      ratios: { cached_vs_host: +(m.verifier_cached / m.host).toFixed(2), first_vs_host: +(m.verifier_first / m.host).toFixed(2) },
      targets: { cached_vs_host: 1.3, first_vs_host: 2.5 },
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:verifier: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);

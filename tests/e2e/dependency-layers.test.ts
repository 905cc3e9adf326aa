import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import type { EnvLayersBody } from "../../daemon/src/contracts/api-responses.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, LAYER_LABEL, labelFilter } from "../../daemon/src/sandbox/labels.js";
import { startGoProxy, type GoProxy } from "../kit/go-proxy.js";
import { startLocalRegistry, type LocalRegistry } from "../kit/npm-registry.js";
import { startPypiIndex, type PypiIndex } from "../kit/pypi-index.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { printedJson, runClient, Started, stateDirIn, type DaemonHandle } from "./harness.js";

/**
 * Dependency layers end to end (issue 25): projects whose dependencies are
 * installed beside them (node_modules, .venv) run their tests through the real
 * client on the container backend. The folder enters every sandbox of the run
 * as a read-only layer built once per key (never copied into the workspace
 * tmpfs, never kept in the baseline); `env list|gc` show and remove layers.
 * One daemon for the whole file.
 */
const docker = createDockerClient(process.env);
const started = new Started();
let d: DaemonHandle;
let root: string;
let socket: string[];

const sha256 = (s: string) => crypto.createHash("sha256").update(s).digest("hex");
const BUGGY = 'import { twice } from "helperlib";\nexport function quad(n) {\n  return twice(n);\n}\n';
const FIXED = 'import { twice } from "helperlib";\nexport function quad(n) {\n  return twice(twice(n));\n}\n';
const NODE_TEST = `import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { quad } from "../src/quad.js";
test("quad uses the installed helper", () => assert.equal(quad(3), 12));
test("the .bin link of the layer runs", () => assert.equal(execFileSync(process.execPath, ["node_modules/.bin/hello"]).toString().trim(), "hello from the layer"));
test("no credential file of node_modules entered the sandbox", () => assert.equal(fs.existsSync("node_modules/.npmrc"), false));
`;
const FIX_REPLAY = {
  schema_version: 1,
  decisions: [
    {
      kind: "tool",
      call: {
        call_id: "c1",
        name: "apply_patch",
        arguments: { path: "src/quad.js", version: sha256(BUGGY), old: "return twice(n);", new: "return twice(twice(n));" },
      },
    },
    { kind: "tool", call: { call_id: "c2", name: "run_tests", arguments: { preset: "tests" } } },
    { kind: "final", text: "quad quadruples" },
  ],
};

function write(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
}

/** A node project with an installed dependency, a `.bin` link into it, an `.npmrc` in node_modules and `padding` bytes of dependency. */
function nodeProject(name: string, padding: number, extra: Record<string, string> = {}): string {
  const ws = path.join(root, name);
  write(ws, {
    "package.json": JSON.stringify({ name, type: "module", scripts: { test: "node --test tests/" } }),
    "package-lock.json": '{"lockfileVersion":3}\n',
    ".gitignore": "node_modules/\n",
    "src/quad.js": BUGGY,
    "tests/quad.test.js": NODE_TEST,
    "node_modules/helperlib/package.json": JSON.stringify({ name: "helperlib", type: "module", main: "index.js" }),
    "node_modules/helperlib/index.js": "export const twice = (n) => n * 2;\n",
    "node_modules/helperlib/bin/hello.js": 'console.log("hello from the layer");\n',
    "node_modules/.npmrc": "//registry.example/:_authToken=npm_CANARYCANARYCANARYCANARY0000\n",
    "node_modules/bigdep/blob.bin": crypto.randomBytes(padding),
    ...extra,
  });
  fs.mkdirSync(path.join(ws, "node_modules/.bin"));
  fs.symlinkSync("../helperlib/bin/hello.js", path.join(ws, "node_modules/.bin/hello"));
  execFileSync("git", ["init", "-q"], { cwd: ws });
  return ws;
}

function replayFile(r: object): string {
  const p = path.join(root, `replay-${crypto.randomUUID()}.json`);
  fs.writeFileSync(p, JSON.stringify(r));
  return p;
}

/** `run --goal` with the fix replay, approving every write, to the run's end */
async function runToEnd(ws: string, approve = true, extra: string[] = []): Promise<{ runId: string; code: number; out: string }> {
  let r = await runClient(["run", "--workspace", ws, "--goal", "quad must quadruple", "--replay", replayFile(FIX_REPLAY), ...extra, ...socket]);
  const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
  let out = r.stdout + r.stderr;
  for (let i = 0; approve && r.code === 3 && i < 5; i++) {
    const s = printedJson(await runClient(["status", runId, "--json", ...socket]));
    r = await runClient(["approve", runId, String(s.action_id), ...socket]);
    out += r.stdout + r.stderr;
  }
  return { runId, code: r.code, out };
}

/** How many runs the test daemon has: a refused run must add none. */
async function runCount(): Promise<number> {
  return (JSON.parse((await runClient(["list", "--json", ...socket])).stdout) as unknown[]).length;
}

async function envList(): Promise<EnvLayersBody> {
  return printedJson(await runClient(["env", "list", "--json", ...socket])) as unknown as EnvLayersBody;
}

function du(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += fs.statSync(path.join(e.parentPath, e.name)).size;
  return n;
}

async function layerVolumes(): Promise<string[]> {
  const label = [LAYER_LABEL, labelFilter(INSTANCE_LABEL, instanceIdFor(d.stateDir))];
  return ((await docker.listVolumes({ filters: { label } })).Volumes ?? []).map((v) => v.Name);
}

beforeAll(async () => {
  const lock = path.join(started.dir("ma-layer-image-"), "sandbox-image.lock.json");
  await pinTestImage(lock, "node", docker);
  await pinTestImage(lock, "python", docker);
  await pinTestImage(lock, "go", docker);
  root = started.dir("ma-layer-");
  // Go's env file is read from here (`go env GOENV`), so a test can name its local module proxy the way a user would
  d = await started.daemon({ stateDir: stateDirIn(root, lock), env: { XDG_CONFIG_HOME: path.join(root, "xdg") } });
  socket = ["--socket", d.socketPath];
}, 900_000);

afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  // layers outlive runs on purpose (no owner label, so no reaper takes them): this file removes its own
  for (const v of d ? await layerVolumes() : []) await docker.getVolume(v).remove({ force: true });
  started.removeDirs();
});

describe("node_modules as a read-only dependency layer", () => {
  it("a project's tests run against its node_modules through the layer (.bin link works, the .npmrc stays out), and the state dir does not grow by node_modules (a 157 MB node_modules once ended as sandbox_error)", async () => {
    const ws = nodeProject("proj-a", 4 * 1024 * 1024);
    const stateBefore = du(d.stateDir);
    const r = await runToEnd(ws);
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 });
    const s = printedJson(await runClient(["status", r.runId, "--json", ...socket]));
    expect(s).toMatchObject({ status: "completed", tests: { passed: 3, failed: 0 } });
    expect(fs.readFileSync(path.join(ws, "src/quad.js"), "utf8")).toBe(FIXED);
    // the baseline holds the project, never its 4 MiB of dependencies
    expect(du(d.stateDir) - stateBefore).toBeLessThan(1024 * 1024);
    expect(fs.existsSync(path.join(d.stateDir, "control", r.runId, "baseline/files/node_modules"))).toBe(false);
    const layers = (await envList()).layers;
    expect(layers).toHaveLength(1);
    expect(layers[0]).toMatchObject({ folder: "node_modules", runs: [r.runId], resumable_runs: [], present: true });
    expect(layers[0]!.size_bytes).toBeGreaterThan(4 * 1024 * 1024);
  }, 600_000);

  it("a second project with the same lock file and node_modules reuses the layer: no second build", async () => {
    const before = (await envList()).layers;
    const ws = nodeProject("proj-b", 0);
    // the same bytes as proj-a's dependencies: copy them over the fresh ones
    fs.rmSync(path.join(ws, "node_modules"), { recursive: true });
    fs.cpSync(path.join(root, "proj-a/node_modules"), path.join(ws, "node_modules"), { recursive: true, verbatimSymlinks: true });
    const r = await runToEnd(ws);
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 });
    const after = (await envList()).layers;
    expect(after).toHaveLength(1);
    expect(after[0]!.key).toBe(before[0]!.key);
    expect(after[0]!.built_at).toBe(before[0]!.built_at);
    expect(after[0]!.runs).toHaveLength(2);
    expect(await layerVolumes()).toHaveLength(1);
  }, 600_000);

  it("a write into node_modules is refused by policy even where the task's writable globs cover it (no approval is asked)", async () => {
    const ws = nodeProject("proj-w", 0);
    const helper = "export const twice = (n) => n * 2;\n";
    const sneaky = {
      schema_version: 1,
      decisions: [
        {
          kind: "tool",
          call: {
            call_id: "w1",
            name: "apply_patch",
            arguments: { path: "node_modules/helperlib/index.js", version: sha256(helper), old: "n * 2", new: "n * 4" },
          },
        },
        { kind: "final", text: "done" },
      ],
    };
    // a task whose writable globs cover everything: only the dependency-folder rule can refuse the write
    const spec = path.join(root, "task-w.json");
    fs.writeFileSync(
      spec,
      JSON.stringify({
        schema_version: 1,
        name: "write-deps",
        task: "g",
        writable: ["**"],
        creatable: ["**"],
        forbidden: [],
        test_presets: { tests: { command: ["node", "--test"], files: ["tests/**/*.js"], parser: "node_test", timeout_seconds: 120 } },
        verify_preset: "tests",
        image_family: "node",
        budgets: { model_turns: 10, tool_calls: 10, total_seconds: 600, per_call_seconds: 120 },
      }),
    );
    const r = await runClient(["run", "--workspace", ws, "--task-spec", spec, "--replay", replayFile(sneaky), ...socket]);
    expect(r.code).not.toBe(3);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    // the trace file keeps the observation the model got: the dependency-folder rule's own words
    const trace = await runClient(["trace", runId, "--file", ...socket]);
    expect(trace.stdout).toContain("is inside a dependency folder");
    expect(fs.readFileSync(path.join(ws, "node_modules/helperlib/index.js"), "utf8")).toContain("n * 2");
  }, 600_000);

  it("env gc removes a layer no resumable run uses and keeps one a run awaiting approval uses; --dry-run and --older-than remove nothing", async () => {
    const ws = nodeProject("proj-c", 1024, { "node_modules/helperlib/extra.js": "export {};\n" });
    const waiting = await runToEnd(ws, false);
    expect(waiting.code).toBe(3);
    const layers = (await envList()).layers;
    const kept = layers.find((l) => l.runs.includes(waiting.runId))!;
    expect(kept.resumable_runs).toEqual([waiting.runId]);
    // the layers of the earlier, finished runs of this file
    const others = layers.filter((l) => l.key !== kept.key).map((l) => l.key);
    expect(others.length).toBeGreaterThan(0);

    const dry = printedJson(await runClient(["env", "gc", "--dry-run", "--json", ...socket])) as unknown as EnvLayersBody;
    expect([...dry.removed!].sort()).toEqual([...others].sort());
    const young = printedJson(await runClient(["env", "gc", "--older-than", "1d", "--json", ...socket])) as unknown as EnvLayersBody;
    expect(young.removed).toEqual([]);
    expect(await layerVolumes()).toHaveLength(layers.length);

    const gc = await runClient(["env", "gc", ...socket]);
    expect(gc.code).toBe(0);
    expect(gc.stdout).toMatch(new RegExp(`^removed ${others.length}: `));
    expect((await envList()).layers.map((l) => l.key)).toEqual([kept.key]);
    expect(await layerVolumes()).toEqual([kept.volume]);

    // once the run is over, nothing keeps its layer
    expect((await runClient(["cancel", waiting.runId, ...socket])).code).toBe(4);
    await runClient(["env", "gc", ...socket]);
    expect((await envList()).layers).toEqual([]);
    expect(await layerVolumes()).toEqual([]);
  }, 600_000);

  it("env gc --older-than refuses a duration it cannot read (exit 64), before anything is sent", async () => {
    const r = await runClient(["env", "gc", "--older-than", "soon", ...socket]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain("--older-than: use a whole number with s, m, h or d");
  });
});

describe(".venv as a read-only dependency layer", () => {
  const PY_BUGGY = "def double(n):\n    return n + n + n\n";
  const pyProject = (name: string, version: string) => {
    const ws = path.join(root, name);
    write(ws, {
      "pyproject.toml": "[tool.pytest.ini_options]\n",
      "calc.py": PY_BUGGY,
      "test_calc.py":
        "import tinydep\nfrom calc import double\n\ndef test_dep():\n    assert tinydep.VALUE == 42\n\ndef test_double():\n    assert double(2) == 4\n",
      ".venv/pyvenv.cfg": `home = /opt/host-python/bin\ninclude-system-site-packages = false\nversion = ${version}\n`,
      [`.venv/lib/python${version.split(".").slice(0, 2).join(".")}/site-packages/tinydep/__init__.py`]: "VALUE = 42\n",
    });
    fs.mkdirSync(path.join(ws, ".venv/bin"));
    fs.symlinkSync("/opt/host-python/bin/python3", path.join(ws, ".venv/bin/python"));
    execFileSync("git", ["init", "-q"], { cwd: ws });
    return ws;
  };

  it("a venv made with the image's Python minor version is imported from (its site-packages on PYTHONPATH)", async () => {
    const ws = pyProject("py-ok", "3.11.2");
    const fix = {
      schema_version: 1,
      decisions: [
        {
          kind: "tool",
          call: { call_id: "p1", name: "apply_patch", arguments: { path: "calc.py", version: sha256(PY_BUGGY), old: "n + n + n", new: "n + n" } },
        },
        { kind: "tool", call: { call_id: "p2", name: "run_tests", arguments: { preset: "tests" } } },
        { kind: "final", text: "fixed" },
      ],
    };
    let r = await runClient(["run", "--workspace", ws, "--goal", "double must double", "--replay", replayFile(fix), ...socket]);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    let out = r.stdout + r.stderr;
    for (let i = 0; r.code === 3 && i < 5; i++) {
      const s = printedJson(await runClient(["status", runId, "--json", ...socket]));
      r = await runClient(["approve", runId, String(s.action_id), ...socket]);
      out += r.stdout + r.stderr;
    }
    expect({ code: r.code, out }).toMatchObject({ code: 0 });
    const s = printedJson(await runClient(["status", runId, "--json", ...socket]));
    expect(s).toMatchObject({ status: "completed", tests: { passed: 2, failed: 0 } });
    expect((await envList()).layers.find((l) => l.runs.includes(runId))).toMatchObject({ folder: ".venv" });
  }, 600_000);

  it("a venv of another Python minor version is refused with both versions named, and no run is made", async () => {
    const ws = pyProject("py-wrong", "3.12.1");
    const runsBefore = await runCount();
    const r = await runClient([
      "run",
      "--workspace",
      ws,
      "--goal",
      "g",
      "--replay",
      replayFile({ schema_version: 1, decisions: [{ kind: "final", text: "x" }] }),
      ...socket,
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(".venv was made with Python 3.12, but the python image runs Python 3.11");
    expect(await runCount()).toBe(runsBefore);
  }, 600_000);
});

describe("installs in an install sandbox whose only way out is the egress proxy (env build)", () => {
  let registry: LocalRegistry;
  const TOKEN = "npm_INSTALLCANARYINSTALLCANARY000000";
  // runs at install time, inside the install sandbox: what it saw is written beside it for the tests to read
  const MARKER = `const fs = require("fs"), os = require("os"), net = require("net"), http = require("http");
const out = { host: os.hostname(), uid: process.getuid(), dev: fs.readFileSync("/proc/net/dev", "utf8"), route: fs.readFileSync("/proc/net/route", "utf8") };
const reg = new URL(process.env.npm_config_registry), proxy = new URL(process.env.HTTP_PROXY);
const done = () => fs.writeFileSync("marker.json", JSON.stringify(out));
const viaProxy = () => {
  http.get({ host: proxy.hostname, port: proxy.port, path: "http://never-resolved.invalid:9/x" }, (r) => {
    out.http = r.statusCode;
    r.resume();
    const c = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "never-resolved.invalid:443" });
    c.on("connect", (res, sock) => { out.connect = res.statusCode; sock.destroy(); done(); });
    c.on("response", (res) => { out.connect = res.statusCode; done(); });
    c.on("error", (e) => { out.connect = e.code; done(); });
    c.end();
  }).on("error", (e) => { out.http = e.code; done(); });
};
const direct = net.connect(Number(reg.port), reg.hostname);
direct.on("connect", () => { out.direct = "connected"; direct.destroy(); viaProxy(); });
direct.on("error", (e) => { out.direct = e.code; viaProxy(); });
`;
  const SANDBOX_TEST = `import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
test("the install script ran in the install sandbox: its own hostname, not this machine's; direct connects fail, unlisted names get 403", () => {
  const m = JSON.parse(fs.readFileSync("node_modules/helperlib/marker.json", "utf8"));
  assert.equal(m.host, "sandbox");
  assert.equal(m.uid, 65534);
  assert.equal(m.direct, "ECONNREFUSED");
  assert.deepEqual([m.http, m.connect], [403, 403]);
  assert.deepEqual(m.dev.split("\\n").slice(2).filter((l) => l.trim()).map((l) => l.split(":")[0].trim()), ["lo"]);
  assert.equal(m.route.split("\\n").slice(1).filter((l) => l.trim()).length, 0);
});
test("the test sandbox that mounts the installed layer has only lo and no routes", () => {
  const dev = fs.readFileSync("/proc/net/dev", "utf8").split("\\n").slice(2).filter((l) => l.trim()).map((l) => l.split(":")[0].trim());
  assert.deepEqual(dev, ["lo"]);
  assert.equal(fs.readFileSync("/proc/net/route", "utf8").split("\\n").slice(1).filter((l) => l.trim()).length, 0);
});
`;

  beforeAll(async () => {
    registry = await startLocalRegistry();
    // published by this test with the real npm client; the registry is on 127.0.0.1 only
    const pkg = path.join(root, "helperlib-src");
    write(pkg, {
      "package.json": JSON.stringify({
        name: "helperlib",
        version: "1.0.0",
        main: "index.js",
        bin: { hello: "bin/hello.js" },
        scripts: { install: "node marker.js" },
      }),
      "index.js": "exports.twice = (n) => n * 2;\n",
      "bin/hello.js": 'console.log("hello from the layer");\n',
      "marker.js": MARKER,
      "publish.npmrc": `//127.0.0.1:${registry.port}/:_authToken=publish-only\n`,
    });
    await promisify(execFile)("npm", ["publish", "--registry", registry.url, "--userconfig", path.join(pkg, "publish.npmrc")], { cwd: pkg });
  }, 120_000);

  afterAll(async () => {
    await registry?.close();
  });

  /** a project that depends on helperlib from the local registry, with its .npmrc (registry and a token) */
  const installProject = (name: string): string => {
    const ws = path.join(root, name);
    write(ws, {
      "package.json": JSON.stringify({ name, type: "module", dependencies: { helperlib: "1.0.0" }, scripts: { test: "node --test tests/" } }),
      ".npmrc": `registry=${registry.url}\n//127.0.0.1:${registry.port}/:_authToken=${TOKEN}\n`,
      ".gitignore": "node_modules/\n",
      "src/quad.js": BUGGY,
      "tests/quad.test.js": NODE_TEST,
      "tests/sandbox.test.js": SANDBOX_TEST,
    });
    execFileSync("git", ["init", "-q"], { cwd: ws });
    return ws;
  };

  it("env build installs from the local registry in the sandbox (its install script runs there, never here; no token is sent; unlisted names are refused and shown), and a run then completes against that layer with all 5 tests passing", async () => {
    const ws = installProject("inst-a");
    const sent = registry.requests.length;
    const b = await runClient(["env", "build", "--workspace", ws, "--install", "npm install --no-package-lock", ...socket]);
    expect({ code: b.code, out: b.stdout + b.stderr }).toMatchObject({ code: 0 });
    expect(b.stdout).toContain(`registry ${registry.url} (from ${path.join(ws, ".npmrc")}); its auth token stayed out of the sandbox`);
    expect(b.stdout).toContain("refused: GET never-resolved.invalid:9:");
    expect(b.stdout).toContain("refused: CONNECT never-resolved.invalid:443:");
    expect(b.stdout).toMatch(/^layer [0-9a-f]{12}: node_modules, /m);
    // what reached the registry: the packument and the tarball, never with a credential
    const got = registry.requests.slice(sent);
    expect(got.map((r) => r.url)).toEqual(expect.arrayContaining(["/helperlib", "/helperlib/-/helperlib-1.0.0.tgz"]));
    expect(got.every((r) => !r.authorized)).toBe(true);
    // nothing of the install is on this machine's workspace: no node_modules, no marker
    expect(fs.existsSync(path.join(ws, "node_modules"))).toBe(false);
    expect(allFilesUnder(ws).filter((f) => f.endsWith("marker.json"))).toEqual([]);

    const r = await runToEnd(ws);
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 });
    const s = printedJson(await runClient(["status", r.runId, "--json", ...socket]));
    expect(s).toMatchObject({ status: "completed", tests: { passed: 5, failed: 0 } });
    expect((await envList()).layers.find((l) => l.runs.includes(r.runId))).toMatchObject({ folder: "node_modules", present: true });
  }, 600_000);

  it("run --install installs in the install sandbox first (its refusals shown), then the run uses that layer and completes with all 5 tests passing", async () => {
    const ws = installProject("inst-run");
    const r = await runToEnd(ws, true, ["--install", "npm install --no-package-lock", "--allow-host", "127.0.0.1:9"]);
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 });
    expect(r.out).toContain(`allowed hosts: 127.0.0.1:${registry.port}, 127.0.0.1:9`);
    expect(r.out).toContain("refused: CONNECT never-resolved.invalid:443:");
    const s = printedJson(await runClient(["status", r.runId, "--json", ...socket]));
    expect(s).toMatchObject({ status: "completed", tests: { passed: 5, failed: 0 } });
    expect(fs.existsSync(path.join(ws, "node_modules"))).toBe(false);
  }, 600_000);

  it("regression: a run on a workspace whose installed layer is gone is refused up front, naming the env build that makes it again (it ran without its dependencies and failed late on a missing module), and no run is made", async () => {
    const ws = installProject("inst-gone");
    const b = await runClient(["env", "build", "--workspace", ws, "--install", "npm install --no-package-lock", ...socket]);
    expect({ code: b.code, out: b.stdout + b.stderr }).toMatchObject({ code: 0 });
    const key = /^layer ([0-9a-f]{12}): node_modules/m.exec(b.stdout)?.[1] ?? "";
    const layer = (await envList()).layers.find((l) => l.key.startsWith(key));
    expect(layer).toBeDefined();
    await docker.getVolume(layer!.volume).remove({ force: true });
    const runsBefore = await runCount();
    const r = await runClient([
      "run",
      "--workspace",
      ws,
      "--goal",
      "g",
      "--replay",
      replayFile({ schema_version: 1, decisions: [{ kind: "final", text: "x" }] }),
      ...socket,
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('node_modules was installed with "npm install --no-package-lock" (env build), but that dependency layer is gone');
    expect(r.stderr).toContain(`env build --workspace ${JSON.stringify(ws)} --install "npm install --no-package-lock"`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await runCount()).toBe(runsBefore);
  }, 600_000);

  it("regression: a --goal run whose drafted runner comes from node_modules (declared, never installed) is refused up front naming env build; it was made and failed at its first run_tests on a missing module", async () => {
    const ws = path.join(root, "mocha-uninstalled");
    write(ws, {
      "package.json": JSON.stringify({ name: "mocha-uninstalled", scripts: { test: "mocha" }, devDependencies: { mocha: "^10.0.0" } }),
      "index.js": "module.exports = (n) => n * 2;\n",
      "test/index.js": 'const assert = require("assert");\nit("doubles", () => assert.equal(require("..")(2), 4));\n',
    });
    execFileSync("git", ["init", "-q"], { cwd: ws });
    const runsBefore = await runCount();
    const r = await runClient([
      "run",
      "--workspace",
      ws,
      "--goal",
      "g",
      "--replay",
      replayFile({ schema_version: 1, decisions: [{ kind: "final", text: "x" }] }),
      ...socket,
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      "invalid_workspace: the tests run node_modules/.bin/mocha, but this workspace has no node_modules and no dependency layer installed for its package.json",
    );
    expect(r.stderr).toContain(`env build --workspace ${JSON.stringify(fs.realpathSync(ws))} --install "npm ci"`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await runCount()).toBe(runsBefore);
  }, 600_000);

  it("regression: an install command that fails makes no layer (exit 1, its status printed) and leaves no install folder (socket, tools) behind", async () => {
    const ws = installProject("inst-fail");
    const leftovers = () => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith("mini-agent-install-"));
    const before = leftovers();
    const layers = (await layerVolumes()).sort();
    const b = await runClient(["env", "build", "--workspace", ws, "--install", "exit 7", ...socket]);
    expect(b.code).toBe(1);
    expect(b.stdout).toContain("the install exited 7: no layer was made");
    expect(leftovers()).toEqual(before);
    expect((await layerVolumes()).sort()).toEqual(layers);
  }, 120_000);

  it("env build refuses an --allow-host that is no host name (a clear error, exit 1) and makes nothing", async () => {
    const ws = installProject("inst-bad");
    const before = (await layerVolumes()).sort();
    const b = await runClient(["env", "build", "--workspace", ws, "--allow-host", "not a host:99999", ...socket]);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('--allow-host "not a host:99999": not a host name');
    expect(b.stderr).not.toMatch(/\n\s+at /);
    // the engine lists volumes in no set order
    expect((await layerVolumes()).sort()).toEqual(before);
  }, 120_000);
});

/** Every file under `dir` with its SHA-256: what a test compares before and after an install. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(allFilesUnder(dir).map((f) => [path.relative(dir, f), crypto.createHash("sha256").update(fs.readFileSync(f)).digest("hex")]));
}

/** `run --goal` with a replay that makes one edit, runs the tests and ends; every write approved */
async function fixAndRun(ws: string, file: string, before: string, from: string, to: string): Promise<{ runId: string; code: number; out: string }> {
  const fix = {
    schema_version: 1,
    decisions: [
      { kind: "tool", call: { call_id: "f1", name: "apply_patch", arguments: { path: file, version: sha256(before), old: from, new: to } } },
      { kind: "tool", call: { call_id: "f2", name: "run_tests", arguments: { preset: "tests" } } },
      { kind: "final", text: "fixed" },
    ],
  };
  let r = await runClient(["run", "--workspace", ws, "--goal", "fix it", "--replay", replayFile(fix), ...socket]);
  const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
  let out = r.stdout + r.stderr;
  for (let i = 0; r.code === 3 && i < 5; i++) {
    const st = printedJson(await runClient(["status", runId, "--json", ...socket]));
    r = await runClient(["approve", runId, String(st.action_id), ...socket]);
    out += r.stdout + r.stderr;
  }
  return { runId, code: r.code, out };
}

describe("pip installs in the install sandbox: the .venv it makes is the layer", () => {
  let index: PypiIndex;
  const PY_BUGGY = "def double(n):\n    return n + n + n\n";
  const PY_TEST = `import tinywheel
from calc import double

def test_dep_from_the_installed_venv():
    assert tinywheel.VALUE == 42
    assert tinywheel.__file__.startswith("/workspace/.venv/")

def test_double():
    assert double(2) == 4

def test_the_test_sandbox_has_only_lo_and_no_routes():
    dev = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:] if l.strip()]
    assert dev == ["lo"]
    assert [l for l in open("/proc/net/route").read().splitlines()[1:] if l.strip()] == []
`;

  beforeAll(async () => {
    index = await startPypiIndex([{ name: "tinywheel", version: "1.0.0", files: { "tinywheel/__init__.py": "VALUE = 42\n" } }]);
  });

  afterAll(async () => {
    await index?.close();
  });

  it("env build runs pip in the sandbox against the requirements file's index (an unlisted name refused and shown), and a run then imports from that .venv and completes with all 3 tests passing", async () => {
    const ws = path.join(root, "pip-a");
    write(ws, {
      "requirements.txt": `--index-url http://127.0.0.1:${index.port}/simple/\ntinywheel==1.0.0\n`,
      "pyproject.toml": "[tool.pytest.ini_options]\n",
      "calc.py": PY_BUGGY,
      "test_calc.py": PY_TEST,
    });
    execFileSync("git", ["init", "-q"], { cwd: ws });
    const before = snapshot(ws);
    const sent = index.requests.length;
    const install =
      "pip install -r requirements.txt && (pip download --retries 0 --no-deps -d /tmp/dl --trusted-host never-resolved.invalid --index-url http://never-resolved.invalid/simple/ x || true)";
    const b = await runClient(["env", "build", "--workspace", ws, "--install", install, ...socket]);
    expect({ code: b.code, out: b.stdout + b.stderr }).toMatchObject({ code: 0 });
    expect(b.stdout).toContain(`index http://127.0.0.1:${index.port}/simple/ (from ${path.join(ws, "requirements.txt")})\n`);
    expect(b.stdout).toContain(`allowed hosts: 127.0.0.1:${index.port}\n`);
    expect(b.stdout).toContain("refused: GET never-resolved.invalid:80:");
    expect(b.stdout).toMatch(/^layer [0-9a-f]{12}: \.venv, /m);
    const got = index.requests.slice(sent);
    expect(got.map((r) => r.url)).toEqual(expect.arrayContaining(["/simple/tinywheel/", "/files/tinywheel-1.0.0-py3-none-any.whl"]));
    expect(got.every((r) => !r.authorized)).toBe(true);
    // the install wrote nothing here: the .venv is the layer, not a folder of the workspace's
    expect(snapshot(ws)).toEqual(before);

    const r = await fixAndRun(ws, "calc.py", PY_BUGGY, "n + n + n", "n + n");
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 });
    const st = printedJson(await runClient(["status", r.runId, "--json", ...socket]));
    expect(st).toMatchObject({ status: "completed", tests: { passed: 3, failed: 0 } });
    expect((await envList()).layers.find((l) => l.runs.includes(r.runId))).toMatchObject({ folder: ".venv", present: true });
  }, 600_000);
});

describe("Go installs in the install sandbox: the vendor/ it makes is the layer", () => {
  let proxy: GoProxy;
  const GO_BUGGY = 'package app\n\nimport "example.test/greet"\n\nfunc Quad(n int) int { return greet.Twice(n) }\n';
  const GO_TEST = `package app

import (
	"os"
	"strings"
	"testing"
)

func TestQuad(t *testing.T) {
	if Quad(3) != 12 {
		t.Fatalf("Quad(3) = %d", Quad(3))
	}
}

func TestTheTestSandboxHasOnlyLoAndNoRoutes(t *testing.T) {
	dev, _ := os.ReadFile("/proc/net/dev")
	var names []string
	for _, l := range strings.Split(string(dev), "\\n")[2:] {
		if strings.TrimSpace(l) != "" {
			names = append(names, strings.TrimSpace(strings.SplitN(l, ":", 2)[0]))
		}
	}
	if strings.Join(names, ",") != "lo" {
		t.Fatalf("interfaces: %v", names)
	}
	route, _ := os.ReadFile("/proc/net/route")
	if n := len(strings.Fields(strings.Join(strings.Split(string(route), "\\n")[1:], " "))); n != 0 {
		t.Fatalf("routes: %q", route)
	}
}
`;

  beforeAll(async () => {
    proxy = await startGoProxy([
      {
        path: "example.test/greet",
        version: "v1.0.0",
        files: { "go.mod": "module example.test/greet\n\ngo 1.19\n", "greet.go": "package greet\n\nfunc Twice(n int) int { return n * 2 }\n" },
      },
    ]);
    // the user's Go configuration, as `go env -w GOPROXY=…` writes it; `direct` is what Go's default has too
    write(path.join(root, "xdg"), { "go/env": `GOPROXY=${proxy.url},direct\n` });
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it("env build fetches through the user's GOPROXY only (direct left out and said so, an unlisted name refused and shown), and a run then builds from that vendor/ with no network and completes with both tests passing", async () => {
    const ws = path.join(root, "go-a");
    write(ws, {
      "go.mod": "module example.test/app\n\ngo 1.19\n\nrequire example.test/greet v1.0.0\n",
      "go.sum": proxy.goSum("example.test/greet", "v1.0.0"),
      "quad.go": GO_BUGGY,
      "quad_test.go": GO_TEST,
    });
    execFileSync("git", ["init", "-q"], { cwd: ws });
    const before = snapshot(ws);
    const sent = proxy.requests.length;
    const install = "go mod download && (GOPROXY=http://never-resolved.invalid go list -m example.test/other@latest || true)";
    const b = await runClient(["env", "build", "--workspace", ws, "--install", install, ...socket]);
    expect({ code: b.code, out: b.stdout + b.stderr }).toMatchObject({ code: 0 });
    expect(b.stdout).toContain(`module proxy (GOPROXY) ${proxy.url} (from ${path.join(root, "xdg", "go", "env")})`);
    expect(b.stdout).toContain("GOPROXY's `direct` was left out");
    expect(b.stdout).toContain(`allowed hosts: 0.0.0.0:${proxy.port}, sum.golang.org:443\n`);
    expect(b.stdout).toContain("refused: GET never-resolved.invalid:80:");
    expect(b.stdout).toMatch(/^layer [0-9a-f]{12}: vendor, /m);
    expect(proxy.requests.slice(sent).map((r) => r.url)).toEqual(expect.arrayContaining(["/example.test/greet/@v/v1.0.0.zip"]));
    // go.sum held every hash: the checksum database was never asked
    expect(b.stdout).not.toContain("sum.golang.org:443:");
    expect(snapshot(ws)).toEqual(before);

    const r = await fixAndRun(ws, "quad.go", GO_BUGGY, "return greet.Twice(n)", "return greet.Twice(greet.Twice(n))");
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 });
    const st = printedJson(await runClient(["status", r.runId, "--json", ...socket]));
    expect(st).toMatchObject({ status: "completed", tests: { passed: 2, failed: 0 } });
    expect((await envList()).layers.find((l) => l.runs.includes(r.runId))).toMatchObject({ folder: "vendor", present: true });
  }, 600_000);
});

function allFilesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

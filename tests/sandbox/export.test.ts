import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxResult, SandboxRunRequest } from "../../daemon/src/contracts/sandbox.js";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import type { Executor } from "../../daemon/src/sandbox/executor.js";
import { runTests } from "../../daemon/src/tools/run-tests.js";
import { verify } from "../../daemon/src/verifier/verify.js";
import { computeManifest } from "../../daemon/src/workspace/manifest.js";
import { freshStateDir, leftoversWithPrefix, removeWithPrefix, runIdPrefix } from "./helpers.js";

/**
 * Issue 10, item 1: a model-written test printed a `.env` password, an
 * OpenSSH private key and an npm token into the run_tests observation. Here a
 * candidate test walks /workspace in a REAL sandbox and prints every path and
 * every file's content; none of the files read_file refuses may show up, on
 * the run_tests path (warm session) and on the Verifier's (fresh sandboxes).
 * The positive controls (an ordinary file, and `.env.test` with the opt-in)
 * make sure the walk really saw /workspace.
 */
const SECRETS = {
  env: "DB_PASSWORD=pw-5c1d-from-dotenv",
  ssh: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ-ssh-9e4f\n-----END OPENSSH PRIVATE KEY-----\n",
  npm: "//registry.npmjs.org/:_authToken=npm_token_3f8a61",
  pem: "-----BEGIN PRIVATE KEY-----\npem-body-6b0c\n-----END PRIVATE KEY-----\n",
  task: "task-forbidden-answer-2d7e",
  hardlink: "outside-by-hardlink-4c9a",
  symlink: "outside-by-symlink-1b3d",
  git: "https://user:git-token-8e1f@example.com/r.git",
};
const FORBIDDEN_PATHS = [
  ".env",
  ".ssh",
  ".ssh/id_ed25519",
  ".npmrc",
  "secrets/x.pem",
  "private/answers.json",
  "src/hard.txt",
  "src/soft.txt",
  ".git",
  ".git/config",
  // links that would carry a forbidden file or .git in: the link rule (export-links.ts) keeps them out
  "src/env-link",
  "src/git-link",
  "src/private-link",
];
const OPT_IN = "env-test-flag-7a2b";

/** a candidate test that passes only when linked fixtures are in the sandbox (tj/commander.js has two such tests) */
const LINKED = `import test from "node:test";
import assert from "node:assert";
import fs from "node:fs";
import { ordinary } from "../src/alias.js";
test("reads fixtures through links", () => {
  assert.strictEqual(fs.readFileSync(new URL("./fixtures/link.txt", import.meta.url), "utf8"), "linked-fixture-5e5e");
  assert.deepStrictEqual(fs.readdirSync(new URL("./fixtures-dir/", import.meta.url)).sort(), ["link.txt", "real.txt"]);
  assert.strictEqual(ordinary, "ordinary-content-0f0f");
});
`;

/** the candidate test: walks /workspace and prints every entry, with each file's content */
const WALKER = `import test from "node:test";
import fs from "node:fs";
import path from "node:path";
test("walks /workspace", () => {
  const walk = (d) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      if (fs.lstatSync(p).isDirectory()) { console.log("DIR " + p); walk(p); continue; }
      let c; try { c = fs.readFileSync(p, "utf8"); } catch (e) { c = "<" + e.code + ">"; }
      console.log("FILE " + p + " " + JSON.stringify(c));
    }
  };
  walk("/workspace");
});
`;

/** the hidden acceptance harness does the same walk (to stderr) before its one case */
const ACCEPT = `import fs from "node:fs";
import path from "node:path";
const walk = (d) => { for (const n of fs.readdirSync(d).sort()) { const p = path.join(d, n);
  if (fs.lstatSync(p).isDirectory()) { console.error("DIR " + p); walk(p); continue; }
  let c; try { c = fs.readFileSync(p, "utf8"); } catch (e) { c = "<" + e.code + ">"; } console.error("FILE " + p + " " + JSON.stringify(c)); } };
walk("/workspace");
process.stdout.write(JSON.stringify({ schema_version: 1, cases: [{ id: "walked", passed: true, actual: 1, error: null }] }) + "\\n");
`;

const task = TaskSpec.parse({
  schema_version: 1,
  name: "export",
  task: "walk the workspace",
  writable: ["src/**"],
  forbidden: ["private/**"],
  test_presets: { candidate: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.test.js"] } },
  verify_preset: "candidate",
  acceptance: { command: ["node", "/control/accept.mjs"], cases: ["walked"], expected: { walked: 1 } },
});

let tmp: string;
let ws: string;
let control: string;
let state: Awaited<ReturnType<typeof freshStateDir>>;
const prefix = runIdPrefix("export");

beforeAll(async () => {
  state = await freshStateDir();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-export-"));
  ws = path.join(tmp, "ws");
  control = path.join(tmp, "control");
  const files: Record<string, string> = {
    "package.json": JSON.stringify({ type: "module" }),
    "src/a.js": "export const ordinary = 'ordinary-content-0f0f';\n",
    "tests/walk.test.js": WALKER,
    "tests/linked.test.js": LINKED,
    "tests/fixtures/real.txt": "linked-fixture-5e5e",
    ".env": SECRETS.env,
    ".env.test": `TEST_FLAG=${OPT_IN}`,
    ".ssh/id_ed25519": SECRETS.ssh,
    ".npmrc": SECRETS.npm,
    "secrets/x.pem": SECRETS.pem,
    "private/answers.json": JSON.stringify({ answer: SECRETS.task }),
    ".git/config": `[remote "origin"]\n  url = ${SECRETS.git}\n`,
  };
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
    await fs.writeFile(path.join(ws, rel), content);
  }
  await fs.writeFile(path.join(tmp, "outside-hard.txt"), SECRETS.hardlink);
  await fs.writeFile(path.join(tmp, "outside-soft.txt"), SECRETS.symlink);
  await fs.link(path.join(tmp, "outside-hard.txt"), path.join(ws, "src/hard.txt"));
  await fs.symlink(path.join(tmp, "outside-soft.txt"), path.join(ws, "src/soft.txt"));
  execFileSync("mkfifo", [path.join(ws, "src/fifo")]);
  await fs.symlink("real.txt", path.join(ws, "tests/fixtures/link.txt"));
  await fs.symlink("fixtures", path.join(ws, "tests/fixtures-dir"));
  await fs.symlink(path.join(ws, "src/a.js"), path.join(ws, "src/alias.js"));
  await fs.symlink("../.env", path.join(ws, "src/env-link"));
  await fs.symlink("../.git/config", path.join(ws, "src/git-link"));
  await fs.symlink("../private/answers.json", path.join(ws, "src/private-link"));
  await fs.mkdir(control);
  await fs.writeFile(path.join(control, "accept.mjs"), ACCEPT);
});

afterAll(async () => {
  await removeWithPrefix(prefix);
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.rm(state.stateDir, { recursive: true, force: true });
});

/** the paths the walk printed (DIR and FILE lines, wherever the runner put them) */
function walked(text: string): Set<string> {
  return new Set([...text.matchAll(/(?:DIR|FILE) \/workspace\/(\S+)/g)].map((m) => m[1]!.replace(/\\n$/, "")));
}

function expectNothingForbidden(text: string): void {
  // the walk is printed in full (nothing cut off that could hide a leak): its first and last entries are there
  expect(text).toContain("FILE /workspace/package.json");
  expect(text).toContain("FILE /workspace/tests/walk.test.js");
  for (const [what, value] of Object.entries(SECRETS)) {
    for (const piece of value.split("\n").filter((l) => l.length > 12)) expect({ what, leaked: text.includes(piece) }).toEqual({ what, leaked: false });
  }
  const seen = walked(text);
  for (const rel of FORBIDDEN_PATHS) expect({ rel, seen: seen.has(rel) }).toEqual({ rel, seen: false });
  expect(seen.has("src/fifo")).toBe(false);
  // positive control: the walk did run over the real /workspace copy
  expect(seen.has("src/a.js")).toBe(true);
  expect(text).toContain("ordinary-content-0f0f");
}

/** the real executor, with every fresh-sandbox result kept for the test to read */
function observed(real: DockerExecutor): { executor: Executor; runs: Array<{ req: SandboxRunRequest; res: SandboxResult }> } {
  const runs: Array<{ req: SandboxRunRequest; res: SandboxResult }> = [];
  const executor: Executor = {
    kind: real.kind,
    describe: () => real.describe(),
    preflight: () => real.preflight(),
    openSession: (id) => real.openSession(id),
    run: async (req) => {
      const res = await real.run(req);
      runs.push({ req, res });
      return res;
    },
  };
  return { executor, runs };
}

// runc only: which files reach a sandbox is decided on the host (the sync's filter) before any runtime is involved, so a
// second pass under gVisor repeated the same checks at several times the CPU. What gVisor itself keeps apart is proven where
// the runtime matters: probes.test.ts, adversarial.test.ts and limits.test.ts run on both.
const runtime = "runc";
describe(`forbidden files never reach a real sandbox on ${runtime}`, () => {
  const ex = () => new DockerExecutor({ lockPath: state.lockPath, config: { runtime } });

  it("regression: run_tests in the warm session shows the model none of .env, the SSH key, the npm token, *.pem, task-forbidden files, links or .git", async () => {
    const runId = `${prefix}-${runtime}-warm`;
    const session = await ex().openSession(runId);
    try {
      const ctx = { task, workspaceRoot: ws, controlDir: control, runner: session, runId, timeoutMs: 120_000 };
      const first = await runTests("c1", { preset: "candidate" }, ctx);
      // the linked-fixture test passed too: links inside the workspace went in
      expect(first.ok, JSON.stringify(first)).toBe(true);
      expect(first.data).toMatchObject({ passed: 2, failed: 0 });
      // and the model is told which links stayed out, and why (never their targets)
      expect((first.data as { links_left_out: unknown }).links_left_out).toEqual({
        count: 4,
        by_reason: { outside: 1, not_exported: 3 },
        paths: [
          { path: "src/env-link", reason: "not_exported" },
          { path: "src/git-link", reason: "not_exported" },
          { path: "src/private-link", reason: "not_exported" },
          { path: "src/soft.txt", reason: "outside" },
        ],
      });
      expect(first.truncated).toBe(false);
      // what the model reads is the whole tool result
      expectNothingForbidden(JSON.stringify(first));
      expect(JSON.stringify(first)).not.toContain(OPT_IN);
      // a forbidden file changed on the host is not synced in by the next (partial) sync either
      await fs.writeFile(path.join(ws, ".env"), `${SECRETS.env}-changed`);
      await fs.writeFile(path.join(ws, "src/b.js"), "export const b = 2;\n");
      const second = await runTests("c2", { preset: "candidate" }, ctx);
      expectNothingForbidden(JSON.stringify(second));
      expect(walked(JSON.stringify(second)).has("src/b.js")).toBe(true);
    } finally {
      await session.close();
      await fs.writeFile(path.join(ws, ".env"), SECRETS.env);
      await fs.rm(path.join(ws, "src/b.js"), { force: true });
    }
    expect(await leftoversWithPrefix(runId)).toEqual({ containers: [], volumes: [] });
  });

  it("regression: the Verifier's fresh sandboxes (candidate tests and acceptance) hold none of them either", async () => {
    const runId = `${prefix}-${runtime}-verify`;
    const { executor, runs } = observed(ex());
    const evidence = await verify({ runId, task, workspaceRoot: ws, baseline: await computeManifest(ws), acceptanceDir: control, executor });
    expect(evidence.reason).toBeNull();
    expect(runs.map((r) => r.req.purpose)).toEqual(["verifier", "acceptance"]);
    for (const { res } of runs) expectNothingForbidden(res.stdout + res.stderr);
    expect(await leftoversWithPrefix(runId)).toEqual({ containers: [], volumes: [] });
  });

  it("--sandbox-include .env.test lets exactly that file in (warm and fresh), reports it, and .env still stays out", async () => {
    const runId = `${prefix}-${runtime}-optin`;
    const reported: string[][] = [];
    const onSandboxInclude = (p: string[]) => void reported.push(p);
    const session = await ex().openSession(runId);
    try {
      const r = await runTests(
        "c1",
        { preset: "candidate" },
        { task, workspaceRoot: ws, controlDir: control, runner: session, runId, timeoutMs: 120_000, sandboxInclude: [".env.test"], onSandboxInclude },
      );
      expect(walked(JSON.stringify(r)).has(".env.test")).toBe(true);
      expect(JSON.stringify(r)).toContain(OPT_IN);
      expectNothingForbidden(JSON.stringify(r));
    } finally {
      await session.close();
    }
    const { executor, runs } = observed(ex());
    const evidence = await verify({
      runId,
      task,
      workspaceRoot: ws,
      baseline: await computeManifest(ws),
      acceptanceDir: control,
      executor,
      sandboxInclude: [".env.test"],
      onSandboxInclude,
    });
    expect(evidence.reason).toBeNull();
    for (const { res } of runs) {
      expect(res.stdout + res.stderr).toContain(OPT_IN);
      expectNothingForbidden(res.stdout + res.stderr);
    }
    expect(reported).toEqual([[".env.test"], [".env.test"], [".env.test"]]);
    expect(await leftoversWithPrefix(runId)).toEqual({ containers: [], volumes: [] });
  });
});

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runClient, Started, stateDirIn } from "./harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * `--sandbox-include` through the real daemon and client (issue 10, item 1):
 * the opted-in `.env.test` reaches the candidate test in the sandbox, `.env`
 * and the other forbidden files do not, read_file still refuses `.env.test`
 * to the model, and the opt-in is in the run's trace and the daemon's log.
 */
const OPT_IN = "env-test-flag-e2e-51c3";
const SECRETS = ["DB_PASSWORD=pw-e2e-8d21", "npm_token_e2e_77aa", "OPENSSH-e2e-key-0c4e"];

const WALKER = `import test from "node:test";
import fs from "node:fs";
import path from "node:path";
test("walks /workspace", () => {
  const walk = (d) => { for (const n of fs.readdirSync(d).sort()) { const p = path.join(d, n);
    if (fs.lstatSync(p).isDirectory()) { console.log("DIR " + p); walk(p); continue; }
    console.log("FILE " + p + " " + JSON.stringify(fs.readFileSync(p, "utf8"))); } };
  walk("/workspace");
});
`;

const TASK = {
  schema_version: 1,
  name: "sandbox-include",
  task: "run the tests",
  writable: ["src/**"],
  test_presets: { candidate: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.test.js"] } },
  verify_preset: "candidate",
};

const REPLAY = {
  schema_version: 1,
  decisions: [
    { kind: "tool", call: { call_id: "call_read_env_test", name: "read_file", arguments: { path: ".env.test" } } },
    { kind: "tool", call: { call_id: "call_run", name: "run_tests", arguments: { preset: "candidate" } } },
    { kind: "final", text: "the tests pass" },
  ],
};

const started = new Started();
let imageLock: string;

beforeAll(async () => {
  const imageStateDir = started.dir("ma-include-image-");
  imageLock = path.join(imageStateDir, "sandbox-image.lock.json");
  await pinTestImage(imageLock);
});
afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

describe("run --sandbox-include through the daemon", () => {
  it("lets the named file into the sandbox only: logged and traced once, read_file still refuses it, .env and the keys stay out; a linked fixture goes in, a link to .env is named as left out", async () => {
    const tmp = started.dir("ma-include-");
    const stateDir = stateDirIn(tmp, imageLock);
    const ws = path.join(tmp, "ws");
    const files: Record<string, string> = {
      "package.json": JSON.stringify({ type: "module" }),
      "src/a.js": "export const a = 1;\n",
      "tests/walk.test.js": WALKER,
      ".env": SECRETS[0]!,
      ".npmrc": `//registry.npmjs.org/:_authToken=${SECRETS[1]}`,
      ".ssh/id_ed25519": `-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRETS[2]}\n-----END OPENSSH PRIVATE KEY-----\n`,
      ".env.test": `TEST_FLAG=${OPT_IN}`,
    };
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      fs.writeFileSync(path.join(ws, rel), content);
    }
    // a linked fixture goes in (rewritten relative); a link to .env stays out and is named in the result
    fs.mkdirSync(path.join(ws, "tests/fixtures"));
    fs.writeFileSync(path.join(ws, "tests/fixtures/real.txt"), "linked-fixture-e2e-3a9d");
    fs.symlinkSync(path.join(ws, "tests/fixtures/real.txt"), path.join(ws, "tests/fixtures/link.txt"));
    fs.symlinkSync("../.env", path.join(ws, "src/env-link"));
    fs.writeFileSync(path.join(tmp, "task.json"), JSON.stringify(TASK));
    fs.writeFileSync(path.join(tmp, "replay.json"), JSON.stringify(REPLAY));

    const d = await started.daemon({ stateDir });
    const socket = ["--socket", d.socketPath];
    const r = await runClient([
      "run",
      "--workspace",
      ws,
      "--task-spec",
      path.join(tmp, "task.json"),
      "--replay",
      path.join(tmp, "replay.json"),
      "--sandbox-include",
      ".env.test",
      ...socket,
    ]);
    // the replay changes nothing and the task has no hidden acceptance: the Verifier still runs the
    // tests in its fresh sandbox (the opt-in goes there too), then fails the run as no_changes
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 1, out: expect.stringContaining("no_changes") });
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";

    // what the model was shown: read_file refused .env.test; the sandbox's walk saw it, and nothing else forbidden
    const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true, fileMustExist: true });
    let observations: Array<{ call_id: string; ok: boolean; error: { code: string } | null; data: unknown }>;
    try {
      observations = (db.prepare("SELECT record FROM messages WHERE run_id = ? AND role = 'tool' ORDER BY idx").all(runId) as Array<{ record: string }>).map(
        (row) => (JSON.parse(row.record) as { result: (typeof observations)[number] }).result,
      );
    } finally {
      db.close();
    }
    const read = observations.find((o) => o.call_id === "call_read_env_test")!;
    expect(read).toMatchObject({ ok: false, error: { code: "path_denied" } });
    const run = JSON.stringify(observations.find((o) => o.call_id === "call_run"));
    expect(run).toContain("FILE /workspace/.env.test");
    expect(run).toContain(OPT_IN);
    expect(run).toContain("FILE /workspace/src/a.js");
    for (const secret of SECRETS) expect(run).not.toContain(secret);
    expect(run).not.toMatch(/FILE \/workspace\/\.env /);
    expect(run).toContain('FILE /workspace/tests/fixtures/link.txt \\"linked-fixture-e2e-3a9d\\"');
    expect(run).not.toContain("FILE /workspace/src/env-link");
    expect((observations.find((o) => o.call_id === "call_run")!.data as { links_left_out: unknown }).links_left_out).toEqual({
      count: 1,
      by_reason: { not_exported: 1 },
      paths: [{ path: "src/env-link", reason: "not_exported" }],
    });

    // the run carries the opt-in, and the paths it let in are traced once (run_tests and the Verifier both sent it)
    const trace = await runClient(["trace", runId, "--jsonl", ...socket]);
    const events = trace.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    expect(events.find((e) => e.type === "run_created")!.payload.sandbox_include).toEqual([".env.test"]);
    expect(events.filter((e) => e.type === "sandbox_include").map((e) => e.payload)).toEqual([{ globs: [".env.test"], paths: [".env.test"] }]);
    for (const secret of [...SECRETS, OPT_IN]) expect(trace.stdout).not.toContain(secret);

    // and the daemon's log says so each time, with the run id (never the content)
    const log = fs.readFileSync(path.join(stateDir, "logs", "daemon.log"), "utf8");
    const lines = log
      .split("\n")
      .filter((l) => l.includes("--sandbox-include"))
      .map((l) => JSON.parse(l) as { runId: string; paths: string[] });
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const l of lines) expect(l).toMatchObject({ runId, paths: [".env.test"] });
    expect(log).not.toContain(OPT_IN);
  });
});

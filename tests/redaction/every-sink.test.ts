import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import Database from "better-sqlite3";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCredentialSource } from "../../daemon/src/credentials/credential-source.js";
import type { IsolationReportSummary } from "../../daemon/src/gate/isolation-facts.js";
import { createLiveModelFactory } from "../../daemon/src/gate/live-model-factory.js";
import { sandboxIsolationFacts } from "../../daemon/src/gate/sandbox-facts.js";
import { createLiveRunRecorder } from "../../daemon/src/live-record/recorder.js";
import { listLiveRunRecords } from "../../daemon/src/live-record/write.js";
import { createLogger } from "../../daemon/src/log/logger.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import { CORPUS_SECRETS, CREDENTIAL_CORPUS } from "../../daemon/src/redact/credential-corpus.testkit.js";
import { createSecretSet } from "../../daemon/src/redact/index.js";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { containerExecutor, leftovers, LINKCHECK, service, tempDir } from "../runtime/harness.js";
import { errorReply, startFakeProvider, textReply, toolCallReply, type FakeProvider } from "../live/openai-server.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

/**
 * ONE list of secret shapes, sent through EVERY sink of a real live run (real
 * SQLite ledger, real container for run_tests, a local OpenAI-compatible
 * server): the log, the ledger rows, the trace export, the per-run trace file, the live run record,
 * the messages as the provider received them, and the tool observations
 * (read_file of an ordinary workspace file, run_tests output). None of the
 * secret values may be found anywhere afterwards (issue 10, item 2).
 */
const KEY = "live-canary-K3yV4lue-9f8e7d"; // no known shape: only the exact-value rule catches it
const SHORT_BEARER = "Xy7pQ2wZk9"; // 10 characters: kept by the old ledger and trace rules
const SHAPES: ReadonlyArray<[text: string, secret: string]> = [
  [`Authorization: Bearer ${SHORT_BEARER}`, SHORT_BEARER],
  ["curl -H 'x-token-header: Bearer ab3Cd9Ef'", "ab3Cd9Ef"],
  ["OPENAI_KEY sk-proj-Q9wErTy7UiOp3AsDfGh1", "Q9wErTy7UiOp3AsDfGh1"],
  ["-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEAleakedPemBody0123\n-----END PRIVATE KEY-----", "leakedPemBody0123"],
  ["//registry.npmjs.org/:_authToken=npm_R4nd0mT0kenValue99", "npm_R4nd0mT0kenValue99"],
  ["aws_access_key_id AKIA2E0A8F3B244C9986", "AKIA2E0A8F3B244C9986"],
  ["gh ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Jj7Hh9Gg0Ff2Dd4", "ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Jj7Hh9Gg0Ff2Dd4"],
  ["slack xoxb-2222-3333-abcdEFGHijkl", "xoxb-2222-3333-abcdEFGHijkl"],
  ["jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFrIn0.Tm9UaGlzSXNBU2lnbmF0dXJlMQ", "Tm9UaGlzSXNBU2lnbmF0dXJlMQ"],
  ["db password=Hunter2Hunter2", "Hunter2Hunter2"],
  ["client_secret = 'cl13ntS3cr3tV4lue'", "cl13ntS3cr3tV4lue"],
  ['token: "t0kenV4lueInQuotes"', "t0kenV4lueInQuotes"],
  ["blob Zx81Kq0PmA7wT4nB2vR9cL5hJ3yF6dG1sE", "Zx81Kq0PmA7wT4nB2vR9cL5hJ3yF6dG1sE"],
  [`the live key itself: ${KEY}`, KEY],
];
/** the credential files' text pasted into an ordinary file: each value must be caught by its shape */
const CORPUS_TEXT = CREDENTIAL_CORPUS.filter((f) => f.binary === undefined)
  .map((f) => f.content)
  .join("\n");
const TEXT = `${SHAPES.map(([t]) => t).join("\n")}\n${CORPUS_TEXT}`;
const SECRETS = [...SHAPES.map(([, s]) => s), ...CORPUS_SECRETS];

/** Secret values found in `text`; the test's verdict for each sink. */
const leaks = (text: string) => SECRETS.filter((s) => text.includes(s));

describe("one redaction rule set, every sink", () => {
  let root: string;
  let stateDir: string;
  let executor: DockerExecutor;
  let server: FakeProvider;
  let dispatcher: Agent;
  const runIds: string[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    root = tempDir("redaction");
    stateDir = path.join(root, "state");
    executor = await containerExecutor(stateDir);
  });
  afterAll(async () => {
    await dispatcher?.close();
    await server?.close();
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("regression: a short Bearer token (8-15 characters), the credential files' values and every other secret shape reach no sink, and no credential file reaches the sandbox (log, ledger, trace export, live record, model messages, tool observations)", async () => {
    // a task whose ordinary, non-forbidden files hold the secrets, and whose test prints them
    const fixture = path.join(root, "fixture");
    fs.cpSync(LINKCHECK, fixture, { recursive: true });
    fs.writeFileSync(path.join(fixture, "repo", "docs", "deploy-notes.md"), `# deploy notes\n\n${TEXT}\n`);
    // the credential files themselves: forbidden, so never in /workspace; the test prints every path it finds there
    for (const f of CREDENTIAL_CORPUS) {
      fs.mkdirSync(path.dirname(path.join(fixture, "repo", f.path)), { recursive: true });
      fs.writeFileSync(path.join(fixture, "repo", f.path), f.content);
    }
    fs.writeFileSync(
      path.join(fixture, "repo", "tests", "test_env.js"),
      `import test from "node:test";\nimport fs from "node:fs";\ntest("prints the deploy notes", () => { console.log(${JSON.stringify(TEXT)}); ` +
        `console.log("SANDBOX FILES " + JSON.stringify(fs.readdirSync("/workspace", { recursive: true }))); });\n`,
    );

    // the daemon's wiring in small: one secret set, told the key when it is read, given to every sink
    const secrets = createSecretSet();
    const credFile = path.join(root, "credentials.json");
    fs.writeFileSync(credFile, JSON.stringify({ api_key: KEY }), { mode: 0o600 });
    const credentials = createCredentialSource({ env: new Map(), filePath: credFile, onRead: (k) => secrets.add(k) });
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger({ level: "debug", destination: sink, knownSecrets: () => secrets.values() });

    server = await startFakeProvider((_req, i) => {
      if (i === 0) return textReply(`plan: check the notes first\n${TEXT}`);
      if (i === 1) return toolCallReply("read_file", { path: "docs/deploy-notes.md" });
      if (i === 2) return toolCallReply("run_tests", { preset: "candidate" });
      if (i === 3) return toolCallReply("read_file", { path: "docs/index.md", note: TEXT });
      return errorReply(400, `Incorrect API key provided: ${KEY}. ${TEXT}`);
    });
    dispatcher = new Agent();
    const fresh: IsolationReportSummary = { passed: true, generated_at: new Date().toISOString(), failed_probe_ids: [] };
    const facts = sandboxIsolationFacts({
      docker: createDockerClient({}),
      sandbox: resolveSandboxConfig({}),
      lockPath: path.join(stateDir, "sandbox-image.lock.json"),
      readReport: async () => fresh,
    });
    let runs: ReturnType<typeof service> | undefined;
    const recorder = createLiveRunRecorder({ stateDir, service: () => runs!, budgetsOf: (id) => runs!.ledger.getRun(id).record.budgets, pollMs: 500 });
    const modelFactory = createLiveModelFactory({
      facts,
      config: resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "scripted-model" }),
      credentials,
      dispatcher,
      recorder,
      log: log.child({ part: "live-model" }),
      workspaceOf: (req) => {
        const r = runs!.ledger.getRun(req.runId).record;
        return { root: r.workspace, controlDir: r.control_dir };
      },
    });
    runs = service(stateDir, executor, { modelFactory, logger: log.child({ part: "runtime" }), knownSecrets: () => secrets.values() });

    const created = await runs.createRun({
      workspace: path.join(root, "ws"),
      fixtureDir: fixture,
      model: "live",
      trustReplayFile: false,
      backend: "container",
    });
    runIds.push(created.run_id);
    const done = await runs.settled(created.run_id);
    expect(done.status).toBe("failed");
    await recorder.settled(created.run_id);
    // the log is a sink like the others: the same list through a field, a nested field, an error and the message
    log.warn({ shapes: SHAPES.map(([t]) => t), nested: { detail: TEXT }, err: new Error(TEXT) }, `while running: ${TEXT}`);
    const trace = runs.traceJsonl(created.run_id);
    // the per-run trace file: the events plus the model's text and each observation's content
    const traceFile = fs.readFileSync(path.join(stateDir, "traces", `${created.run_id}.jsonl`), "utf8");
    const observations = runs.ledger.listMessages(created.run_id).flatMap((m) => (m.role === "tool" ? [m.result] : []));
    await runs.shutdown();
    await recorder.close();

    // every sink really carried the secret-bearing text: a sink that never saw it proves nothing
    const ledgerDb = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
    const tables = (ledgerDb.prepare("SELECT name FROM sqlite_master WHERE type='table'").all() as Array<{ name: string }>).map((t) => t.name);
    const ledgerText = tables.map((t) => JSON.stringify(ledgerDb.prepare(`SELECT * FROM "${t}"`).all())).join("\n");
    ledgerDb.close();
    const records = JSON.stringify((await listLiveRunRecords(stateDir)).filter((r) => r.run_id === created.run_id));
    const sent = server.requests.map((r) => r.raw);
    const logText = logLines.join("");

    expect(sent).toHaveLength(5);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`); // the key goes where it belongs, and only there
    const [readNotes, tests, invalid] = observations;
    expect(readNotes).toMatchObject({ ok: true, data: { path: "docs/deploy-notes.md", version: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(JSON.stringify(readNotes)).toContain("Bearer [redacted]");
    expect(JSON.stringify(tests)).toContain("prints the deploy notes");
    expect(JSON.stringify(tests)).toContain("[redacted]");
    // the sandbox copy: the walk of /workspace reached the output, and no credential file was in it
    expect(JSON.stringify(tests)).toContain("SANDBOX FILES");
    expect(JSON.stringify(tests)).toContain("deploy-notes.md");
    expect(CREDENTIAL_CORPUS.map((f) => f.path).filter((rel) => JSON.stringify(tests).includes(`\\"${rel}\\"`))).toEqual([]);
    expect(invalid).toMatchObject({ ok: false, error: { code: "invalid_fields" } });
    // the read_file observation reached the model scrubbed, with its version intact for apply_patch
    expect(sent[2]).toContain((readNotes!.data as { version: string }).version);
    expect(sent[2]).toContain("Bearer [redacted]");
    expect(trace).toContain("plan_recorded");
    expect(trace).toContain("[redacted]");
    expect(traceFile).toContain('"kind":"model_text"');
    expect(traceFile).toContain('"kind":"observation"');
    expect(traceFile).toContain("[redacted]");
    expect(records).toContain("[redacted]");
    expect(done.reason).toContain("[redacted]");
    expect(logText).toContain("[redacted]");

    expect({
      log: leaks(logText),
      ledger: leaks(ledgerText),
      trace_export: leaks(trace),
      trace_file: leaks(traceFile),
      live_record: leaks(records),
      model_messages: sent.map(leaks),
      tool_observations: leaks(JSON.stringify(observations)),
      run_reason: leaks(done.reason ?? ""),
    }).toEqual({
      log: [],
      ledger: [],
      trace_export: [],
      trace_file: [],
      live_record: [],
      model_messages: [[], [], [], [], []],
      tool_observations: [],
      run_reason: [],
    });

    // and no file the daemon wrote holds one: ledger, its WAL, logs, records, control dirs. The
    // baseline's copy of the workspace is the user's own files as they were, not a record of ours
    const files: string[] = [];
    for (const e of fs.readdirSync(stateDir, { withFileTypes: true, recursive: true })) {
      if (!e.isFile() || e.parentPath.split(path.sep).join("/").includes("/baseline/files")) continue;
      const bytes = fs.readFileSync(path.join(e.parentPath, e.name)).toString("utf8");
      for (const s of leaks(bytes)) files.push(`${path.relative(stateDir, path.join(e.parentPath, e.name))}: ${s}`);
    }
    expect(files).toEqual([]);
  });
});

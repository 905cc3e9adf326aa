import { shellRun } from "../kit/shell.js";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ErrorBody } from "../../daemon/src/contracts/api.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { allFiles, REPO, rawRequest, runClient, Started, type DaemonHandle, stateDirIn, printedJson } from "./harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { INSTANCE_LABEL, labelFilter, OWNER_FILTER, POOL_PURPOSE, PURPOSE_LABEL, RUN_LABEL, sandboxLabels } from "../../daemon/src/sandbox/labels.js";

/**
 * Whole runs through the real daemon and the real client: the canonical
 * linkcheck fixture with its two approvals, refused requests that change
 * nothing, concurrency per workspace, a SIGKILL mid-run, and a credential
 * canary that must appear nowhere.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);

let imageLock: string;
let imageStateDir: string;
const started = new Started();
const dir = (prefix: string) => started.dir(prefix);

/** a state dir that already knows the pinned sandbox image (built once for the file) */
const stateDirWithImage = (): string => stateDirIn(dir("ma-flow-"), imageLock);

function daemon(stateDir: string, env: Record<string, string> = {}): Promise<DaemonHandle> {
  return started.daemon({ stateDir, env });
}

async function status(socket: string, runId: string) {
  const r = await runClient(["status", runId, "--json", "--socket", socket]);
  return printedJson(r) as { run_id: string; status: string; reason: string | null; action_id: string | null };
}

async function containersOf(runId: string) {
  return docker.listContainers({ all: true, filters: { label: [labelFilter(RUN_LABEL, runId)] } });
}

/** counts of every table in the ledger: the "nothing changed" witness */
function ledgerCounts(stateDir: string): Record<string, number> {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").all() as Array<{ name: string }>;
    return Object.fromEntries(tables.map((t) => [t.name, (db.prepare(`SELECT COUNT(*) AS n FROM "${t.name}"`).get() as { n: number }).n]));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await docker.ping(); // these tests need the real engine; fail clearly when it is missing
  imageStateDir = dir("ma-flow-image-");
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

describe("runs through the daemon and the client", () => {
  it("completes the linkcheck fixture with two approvals given through the client", async () => {
    const stateDir = stateDirWithImage();
    const d = await daemon(stateDir);
    const ws = path.join(path.dirname(stateDir), "ws");
    const socket = ["--socket", d.socketPath];

    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, ...socket]);
    expect(first.code).toBe(3);
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    const s1 = await status(d.socketPath, runId);
    expect(s1.status).toBe("awaiting_approval");
    // the exact commands, pasteable, and the diff of the pending write
    expect(first.stdout).toContain(` approve --socket ${d.socketPath} ${runId} ${s1.action_id}`);
    expect(first.stdout).toContain(` reject --socket ${d.socketPath} ${runId} ${s1.action_id} --reason`);
    expect(first.stdout).toContain("tests/test_agent_nested.js");
    expect(first.stdout).toMatch(/^\+/m);

    // regression: the printed `mini-agent-client approve …` was `command not found` after the README's set-up
    // (no `npm link`); it is pasted into a shell that has only that set-up, from another folder, and runs
    const printed = /^ {2}(.+ approve .+)$/m.exec(first.stdout)?.[1];
    expect(printed, first.stdout).toBeDefined();
    const second = await shellRun(printed!);
    expect(second.code, second.output).toBe(3);
    const s2 = await status(d.socketPath, runId);
    expect(s2.action_id).not.toBe(s1.action_id);
    expect(second.output).toContain("src/linkcheck.js");

    const done = await runClient(["approve", runId, s2.action_id!, ...socket]);
    expect({ code: done.code, out: done.stdout + done.stderr }).toMatchObject({ code: 0 });
    expect(done.stdout).toContain("completed: verified by the host Verifier");
    expect((await status(d.socketPath, runId)).status).toBe("completed");

    const diff = await runClient(["diff", runId, ...socket]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain("src/linkcheck.js");
    expect(diff.stdout).toContain("tests/test_agent_nested.js");
    expect(diff.stdout).not.toContain("notes.txt");
    expect(fs.readFileSync(path.join(ws, "notes.txt"))).toEqual(fs.readFileSync(path.join(FIXTURE, "repo/notes.txt")));

    const trace = await runClient(["trace", runId, "--jsonl", ...socket]);
    const events = trace.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.filter((e) => e.type === "action_written")).toHaveLength(2);
    expect(events.filter((e) => e.type === "approval_recorded")).toHaveLength(2);
    expect(trace.stdout).not.toContain(ws); // no host paths in the canonical trace
    expect(await containersOf(runId)).toEqual([]);
  });

  it("refuses malformed, unknown-field, oversize and unknown-target requests with clear errors and changes nothing", async () => {
    const stateDir = stateDirWithImage();
    const d = await daemon(stateDir);
    const ws = path.join(path.dirname(stateDir), "ws");
    const r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--socket", d.socketPath]);
    expect(r.code).toBe(3);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    const before = { counts: ledgerCounts(stateDir), runs: (await rawRequest(d.socketPath, "GET", "/v1/runs")).text, files: allFiles(ws).sort() };

    const other = path.join(path.dirname(stateDir), "ws-other");
    const cases: Array<[string, "GET" | "POST", string, string | undefined, number, string]> = [
      ["malformed JSON", "POST", "/v1/runs", '{"workspace":', 400, "invalid_request"],
      ["unknown field", "POST", "/v1/runs", JSON.stringify({ workspace: other, fixture_dir: FIXTURE, approve_all: true }), 400, "invalid_request"],
      [
        "oversize body",
        "POST",
        "/v1/runs",
        JSON.stringify({ workspace: other, fixture_dir: FIXTURE, pad: "x".repeat(2 * 1024 * 1024) }),
        413,
        "payload_too_large",
      ],
      ["unknown run", "GET", "/v1/runs/no-such-run", undefined, 404, "run_not_found"],
      ["approve on an unknown run", "POST", "/v1/runs/no-such-run/actions/a/approve", "{}", 404, "run_not_found"],
      ["approve an unknown action", "POST", `/v1/runs/${runId}/actions/no-such-action/approve`, "{}", 404, "approval_unknown"],
      ["reject without a reason", "POST", `/v1/runs/${runId}/actions/no-such-action/reject`, "{}", 400, "invalid_request"],
      ["approve with a body", "POST", `/v1/runs/${runId}/actions/x/approve`, JSON.stringify({ all: true }), 400, "invalid_request"],
      ["unknown endpoint", "POST", "/v1/approve-all", "{}", 404, "not_found"],
    ];
    for (const [name, method, p, body, code, errCode] of cases) {
      const res = await rawRequest(d.socketPath, method, p, body);
      expect({ name, status: res.status }).toEqual({ name, status: code });
      const e = ErrorBody.parse(res.json).error;
      expect({ name, code: e.code }).toEqual({ name, code: errCode });
      expect(res.text).not.toMatch(/\n\s+at |node_modules/);
    }
    expect(fs.existsSync(other)).toBe(false);
    expect(ledgerCounts(stateDir)).toEqual(before.counts);
    expect((await rawRequest(d.socketPath, "GET", "/v1/runs")).text).toBe(before.runs);
    expect(allFiles(ws).sort()).toEqual(before.files);
    await runClient(["cancel", runId, "--socket", d.socketPath]);
  });

  it("runs two workspaces at once and refuses a second run on a busy workspace", async () => {
    const stateDir = stateDirWithImage();
    const d = await daemon(stateDir);
    const base = path.dirname(stateDir);
    const [a, b] = await Promise.all(
      ["ws-a", "ws-b"].map((w) => runClient(["run", "--fixture", FIXTURE, "--workspace", path.join(base, w), "--socket", d.socketPath])),
    );
    expect([a!.code, b!.code]).toEqual([3, 3]);
    const idA = /run (\S+) started/.exec(a!.stdout)?.[1] ?? "";
    const idB = /run (\S+) started/.exec(b!.stdout)?.[1] ?? "";
    expect(idA).not.toBe(idB);
    const runsBefore = (await rawRequest(d.socketPath, "GET", "/v1/runs")).text;

    const busy = await runClient([
      "run",
      "--workspace",
      path.join(base, "ws-a"),
      "--task-spec",
      path.join(FIXTURE, "task.json"),
      "--control",
      path.join(FIXTURE, "control"),
      "--replay",
      path.join(FIXTURE, "replay.json"),
      "--socket",
      d.socketPath,
    ]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain("workspace_busy");
    expect((await rawRequest(d.socketPath, "GET", "/v1/runs")).text).toBe(runsBefore);

    // both runs proceed independently to completion
    for (const id of [idA, idB]) {
      for (let i = 0; i < 4; i++) {
        const s = await status(d.socketPath, id);
        if (s.status !== "awaiting_approval") break;
        await runClient(["approve", id, s.action_id!, "--socket", d.socketPath]);
      }
      expect((await status(d.socketPath, id)).status).toBe("completed");
    }
  });

  it("a daemon SIGKILLed between a write and its receipt comes back with the run interrupted, and resume completes it without a duplicate write", async () => {
    const stateDir = stateDirWithImage();
    // the runtime's test-only crash point: the daemon SIGKILLs itself right after the first write
    let d = await daemon(stateDir, { MINI_AGENT_CRASH_AT: "after_write_before_receipt" });
    const ws = path.join(path.dirname(stateDir), "ws");
    const r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--socket", d.socketPath]);
    expect(r.code).toBe(3);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    const a1 = (await status(d.socketPath, runId)).action_id!;
    await runClient(["approve", runId, a1, "--socket", d.socketPath]);
    expect(await d.exited).toBe("SIGKILL");
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(true);

    // what a killed daemon may leave: a sandbox of its own run, next to one of another daemon's run
    const image = (JSON.parse(fs.readFileSync(imageLock, "utf8")) as { images: Record<string, { digest: string }> }).images.node!.digest;
    const foreignRun = `run_foreign_${process.pid}`;
    const probeRun = `probe-${process.pid}-inside`;
    const foreignProbeRun = `probe-${process.pid}-foreign`;
    const leftover = async (run: string, instance?: string) =>
      docker.createContainer({
        Image: image,
        Cmd: ["/usr/bin/node", "-e", "0"],
        Labels: sandboxLabels(run, "session", instance ?? null),
      });
    await leftover(runId);
    // a probe sandbox is in no ledger: only this daemon's instance label says it is this daemon's
    await leftover(probeRun, instanceIdFor(stateDir));
    const foreign = await leftover(foreignRun);
    const foreignProbe = await leftover(foreignProbeRun, instanceIdFor(`${stateDir}-another`));
    try {
      d = await daemon(stateDir);
      const after = await status(d.socketPath, runId);
      expect(after.status).toBe("interrupted");
      // the restarted daemon reaped its own run's and its own probe's leftovers, and never another daemon's sandboxes
      expect(await containersOf(runId)).toEqual([]);
      expect(await containersOf(probeRun)).toEqual([]);
      expect((await containersOf(foreignRun)).map((c) => c.Id)).toEqual([foreign.id]);
      expect((await containersOf(foreignProbeRun)).map((c) => c.Id)).toEqual([foreignProbe.id]);
    } finally {
      await foreign.remove({ force: true });
      await foreignProbe.remove({ force: true });
    }

    const resumed = await runClient(["resume", runId, "--socket", d.socketPath]);
    expect(resumed.code).toBe(3);
    const a2 = (await status(d.socketPath, runId)).action_id!;
    expect(a2).not.toBe(a1);
    const done = await runClient(["approve", runId, a2, "--socket", d.socketPath]);
    expect({ code: done.code, out: done.stdout + done.stderr }).toMatchObject({ code: 0 });

    const trace = (await runClient(["trace", runId, "--jsonl", "--socket", d.socketPath])).stdout;
    const events = trace
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; action_id: string | null });
    const intents = events.filter((e) => e.type === "action_intent");
    expect(intents.map((e) => e.action_id)).toEqual([a1, a2]);
    expect(events.filter((e) => e.type === "action_receipt").map((e) => e.action_id)).toEqual([a1, a2]);
    const replay = JSON.parse(fs.readFileSync(path.join(FIXTURE, "replay.json"), "utf8")) as {
      decisions: Array<{ call?: { name: string; arguments: { path?: string; new?: string } } }>;
    };
    const created = replay.decisions.find((x) => x.call?.arguments.path === "tests/test_agent_nested.js")!.call!.arguments.new!;
    expect(fs.readFileSync(path.join(ws, "tests/test_agent_nested.js"), "utf8")).toBe(created);
  });

  it("SIGTERM while a run executes: the daemon exits 0, leaves no sandbox behind, and the run resumes to completion", async () => {
    const stateDir = stateDirWithImage();
    let d = await daemon(stateDir);
    const ws = path.join(path.dirname(stateDir), "ws");
    const r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--socket", d.socketPath]);
    expect(r.code).toBe(3);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    const a1 = (await status(d.socketPath, runId)).action_id!;
    await runClient(["approve", runId, a1, "--no-follow", "--socket", d.socketPath]);
    expect(await d.stop("SIGTERM")).toBe(0);
    expect(fs.existsSync(d.socketPath)).toBe(false);
    expect(await containersOf(runId)).toEqual([]);

    d = await daemon(stateDir);
    for (let i = 0; i < 6; i++) {
      const s = await status(d.socketPath, runId);
      if (s.status === "completed") break;
      if (s.status === "interrupted") await runClient(["resume", runId, "--socket", d.socketPath]);
      else if (s.status === "awaiting_approval") await runClient(["approve", runId, s.action_id!, "--socket", d.socketPath]);
      else throw new Error(`unexpected status ${s.status}: ${String(s.reason)}`);
    }
    expect((await status(d.socketPath, runId)).status).toBe("completed");
    const trace = (await runClient(["trace", runId, "--jsonl", "--socket", d.socketPath])).stdout;
    expect(
      trace
        .trim()
        .split("\n")
        .filter((l) => (JSON.parse(l) as { type: string }).type === "action_written"),
    ).toHaveLength(2);
  });

  it("exit codes through the stack: budget exhausted is 5, resume with a larger budget goes on (3), cancel is 4", async () => {
    const stateDir = stateDirWithImage();
    const d = await daemon(stateDir);
    const socket = ["--socket", d.socketPath];
    const ws = path.join(path.dirname(stateDir), "ws");
    const r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--max-tool-calls", "1", ...socket]);
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 5 });
    expect(r.stdout).toMatch(/resume with more budget: \S.* resume --socket /);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    expect((await status(d.socketPath, runId)).status).toBe("budget_exhausted");
    const resumed = await runClient(["resume", runId, "--max-tool-calls", "20", ...socket]);
    expect({ code: resumed.code, out: resumed.stdout + resumed.stderr }).toMatchObject({ code: 3 });
    const cancelled = await runClient(["cancel", runId, ...socket]);
    expect(cancelled.code).toBe(4);
    expect((await status(d.socketPath, runId)).status).toBe("cancelled");
    expect(await containersOf(runId)).toEqual([]);
  });

  it("--runtime runsc reaches the sandbox and the probes: health names it, the report is for runsc, and health follows the report's verdict", async () => {
    const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
    expect(Object.keys(info.Runtimes ?? {})).toContain("runsc"); // registered on this engine (docker-ensure does it)
    const stateDir = stateDirWithImage();
    const d = await started.daemon({ stateDir, args: ["--runtime", "runsc"] });
    const socket = ["--socket", d.socketPath];
    const before = JSON.parse((await runClient(["health", "--json", ...socket])).stdout) as { engine: { runtime: string }; isolation: { verdict: string } };
    expect(before.engine.runtime).toBe("runsc");
    expect(before.isolation.verdict).toBe("none");
    const probe = await runClient(["probe", "--json", ...socket]);
    const report = JSON.parse(probe.stdout) as { runtime: string; passed: boolean };
    expect(report.runtime).toBe("runsc");
    // whether every probe passes on gVisor is the probes' verdict; the daemon must report it faithfully
    expect(probe.code).toBe(report.passed ? 0 : 2);
    const after = await runClient(["health", "--json", ...socket]);
    const h = JSON.parse(after.stdout) as { isolation: { verdict: string } };
    expect(h.isolation.verdict).toBe(report.passed ? "passed" : "failed");
    expect(after.code).toBe(report.passed ? 0 : 2);
  });

  it("never lets the credential canary out: not in the state dir, logs, trace, API answers or sandbox containers", async () => {
    const canaryEnv = "sk-canaryENV0123456789abcdefXYZ";
    const canaryFile = "sk-canaryFILE0123456789abcdefXYZ";
    const stateDir = stateDirWithImage();
    fs.writeFileSync(path.join(stateDir, "credentials.json"), JSON.stringify({ api_key: canaryFile }), { mode: 0o600 });
    const d = await daemon(stateDir, { MINI_AGENT_API_KEY: canaryEnv, OPENAI_API_KEY: canaryEnv });
    const ws = path.join(path.dirname(stateDir), "ws");
    const socket = ["--socket", d.socketPath];
    const seen: string[] = [];
    // every sandbox container this daemon creates is inspected the moment the engine reports its creation
    const inspections: Array<Promise<void>> = [];
    let inspected = 0;
    const events = (await docker.getEvents({ filters: { type: ["container"], event: ["create"], label: [OWNER_FILTER] } })) as NodeJS.ReadableStream;
    const myRuns = new Set<string>();
    events.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        const ev = JSON.parse(line) as { id: string; Actor?: { Attributes?: Record<string, string> } };
        const attrs = ev.Actor?.Attributes ?? {};
        // the Verifier's sandboxes come from this daemon's pool: labelled as its pool members, not by run
        const myPool = attrs[PURPOSE_LABEL] === POOL_PURPOSE && attrs[INSTANCE_LABEL] === instanceIdFor(stateDir);
        if (!myRuns.has(attrs[RUN_LABEL] ?? "") && !myPool) continue;
        inspections.push(
          docker
            .getContainer(ev.id)
            .inspect()
            .then((info) => {
              seen.push(JSON.stringify(info));
              inspected++;
            })
            .catch(() => undefined),
        );
      }
    });

    // a live run without a probe report is refused by the gate, before anything is read
    const live = await runClient(["run", "--fixture", FIXTURE, "--workspace", path.join(path.dirname(stateDir), "ws-live"), "--model", "live", ...socket]);
    expect(live.code).toBe(2);
    expect(live.stderr).toContain("isolation_unverified");
    expect(live.stderr).toMatch(/refresh the isolation report with: \S.* probe --socket /);
    seen.push(live.stdout, live.stderr);

    const r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, ...socket]);
    seen.push(r.stdout, r.stderr);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    myRuns.add(runId); // the first approval comes before any sandbox is needed (read_file runs on the host)
    for (let i = 0; i < 4; i++) {
      const s = await status(d.socketPath, runId);
      if (s.status !== "awaiting_approval") break;
      // the run's sandbox containers while they exist: nothing of the key in their config
      const a = await runClient(["approve", runId, s.action_id!, ...socket]);
      seen.push(a.stdout, a.stderr);
    }
    expect((await status(d.socketPath, runId)).status).toBe("completed");
    (events as unknown as { destroy(): void }).destroy();
    await Promise.all(inspections);
    expect(inspected).toBeGreaterThan(0); // run_tests, the Verifier and acceptance containers, inspected while they existed
    for (const p of [
      `/v1/runs`,
      `/v1/runs/${runId}`,
      `/v1/runs/${runId}/trace`,
      `/v1/runs/${runId}/diff`,
      `/v1/runs/${runId}/events?since=0`,
      `/v1/health`,
      `/v1/isolation-report`,
    ]) {
      seen.push((await rawRequest(d.socketPath, "GET", p)).text);
    }
    await d.stop("SIGTERM");
    for (const f of allFiles(stateDir)) {
      if (path.basename(f) === "credentials.json") continue;
      seen.push(fs.readFileSync(f).toString("latin1"));
    }
    for (const f of allFiles(ws)) seen.push(fs.readFileSync(f).toString("latin1"));
    seen.push(d.stdout(), d.stderr());
    const all = seen.join("\n");
    expect(all.length).toBeGreaterThan(1000);
    expect(all).not.toContain(canaryEnv);
    expect(all).not.toContain(canaryFile);
    expect(all).not.toContain("canaryENV");
    expect(all).not.toContain("canaryFILE");
  });
});

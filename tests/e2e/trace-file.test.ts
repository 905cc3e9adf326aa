import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseTraceFile, type TraceFileLine } from "../../daemon/src/contracts/trace-file.js";
import { CRASH_ENV } from "../../daemon/src/runtime/crash.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started, type ClientResult, stateDirIn, printedJson } from "./harness.js";

/**
 * The per-run trace file through the real daemon and client on the container
 * backend: it exists (0600) while the run waits, its lines are the
 * `trace --jsonl` events plus time and content, the end of the run names it
 * and the changed files, and a SIGKILL then a torn fragment never glue a new
 * event onto the cut line.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

const stateDirWithImage = (): string => stateDirIn(started.dir("ma-tracefile-"), imageLock);

const withoutExtras = (e: TraceFileLine) => ({ seq: e.seq, type: e.type, call_id: e.call_id, action_id: e.action_id, payload: e.payload });
const jsonlEvents = (r: ClientResult) =>
  r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-tracefile-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
}, 600_000);

afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});

afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

describe("the per-run trace file", () => {
  it("is written as the run goes (0600), holds the trace --jsonl events plus content, and the end of the run names it and the changed files", async () => {
    const stateDir = stateDirWithImage();
    const d = await started.daemon({ stateDir });
    const socket = ["--socket", d.socketPath];
    const ws = path.join(path.dirname(stateDir), "ws");

    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, ...socket]);
    expect(first.code).toBe(3);
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    const file = path.join(stateDir, "traces", `${runId}.jsonl`);
    // during the run (waiting for an approval): the file is there, private, and every line so far is an event
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const during = parseTraceFile(fs.readFileSync(file, "utf8"));
    expect(during.torn).toEqual([]);
    expect(during.events.map(withoutExtras)).toEqual(jsonlEvents(await runClient(["trace", runId, "--jsonl", ...socket])));

    let s = printedJson(await runClient(["status", runId, "--json", ...socket]));
    const a1 = await runClient(["approve", runId, String(s.action_id), ...socket]);
    expect(a1.code).toBe(3);
    s = printedJson(await runClient(["status", runId, "--json", ...socket]));
    const done = await runClient(["approve", runId, String(s.action_id), ...socket]);
    expect({ code: done.code, out: done.stdout + done.stderr }).toMatchObject({ code: 0 });
    // the existing summary line stays; the changed files and the trace file's path follow it
    expect(done.stdout).toContain("completed: verified by the host Verifier");
    expect(done.stdout).toContain("changed files (2): src/linkcheck.js, tests/test_agent_nested.js");
    expect(done.stdout).toContain(`trace file: ${fs.realpathSync(file)}`);
    const status = await runClient(["status", runId, ...socket]);
    expect(status.stdout).toContain("changed files (2): src/linkcheck.js, tests/test_agent_nested.js");
    expect(status.stdout).toContain(`trace file: ${fs.realpathSync(file)}`);
    const view = printedJson(await runClient(["status", runId, "--json", ...socket]));
    expect(view.changed_files).toEqual({ paths: ["src/linkcheck.js", "tests/test_agent_nested.js"], count: 2 });
    expect(view.trace_file).toBe(fs.realpathSync(file));

    // the file through the API is the file on disk; its lines are the canonical events plus at and content
    const viaClient = await runClient(["trace", runId, "--file", ...socket]);
    expect(viaClient.code).toBe(0);
    expect(viaClient.stdout).toBe(fs.readFileSync(file, "utf8"));
    expect(viaClient.stderr).not.toContain("torn");
    const parsed = parseTraceFile(viaClient.stdout);
    expect(parsed.torn).toEqual([]);
    expect(parsed.events.map(withoutExtras)).toEqual(jsonlEvents(await runClient(["trace", runId, "--jsonl", ...socket])));
    const observed = parsed.events.filter((e) => e.type === "tool_observed");
    expect(observed.length).toBeGreaterThan(0);
    for (const e of observed) expect(e.content).toMatchObject({ kind: "observation" });
    expect(parsed.events.find((e) => e.type === "tool_observed" && e.payload.tool === "read_file")?.content?.text).toContain("untrusted_workspace_data");
    expect(parsed.events.find((e) => e.type === "verification_started")?.content?.kind).toBe("model_text");
    expect(parsed.events.every((e) => e.at > 0)).toBe(true);
    expect(viaClient.stdout).not.toContain(ws); // host paths are placeholders, as in the export
  }, 600_000);

  it("regression: after a real SIGKILL and a torn fragment, the restarted daemon terminates the fragment before the run's next event", async () => {
    const stateDir = stateDirWithImage();
    const crashing = await started.daemon({ stateDir, env: { [CRASH_ENV]: "after_write_before_receipt" } });
    const ws = path.join(path.dirname(stateDir), "ws");
    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--socket", crashing.socketPath]);
    expect(first.code).toBe(3);
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    const s = printedJson(await runClient(["status", runId, "--json", "--socket", crashing.socketPath]));
    await runClient(["approve", runId, String(s.action_id), "--socket", crashing.socketPath]);
    expect(await crashing.exited).toBe("SIGKILL");

    const file = path.join(stateDir, "traces", `${runId}.jsonl`);
    const atKill = fs.readFileSync(file, "utf8");
    expect(parseTraceFile(atKill).torn).toEqual([]); // the kill came between writes: nothing torn
    // a kill inside a write leaves part of a line (41 bytes of one here)
    fs.appendFileSync(file, '{"seq":999,"at":1,"type":"plan_recorded",');
    const fragmentLine = atKill.split("\n").length; // the fragment's own line number
    expect(parseTraceFile(fs.readFileSync(file, "utf8")).torn).toEqual([{ line: fragmentLine, bytes: 41, why: "no_newline" }]);

    // the restarted daemon marks the run interrupted and the user resumes it: both append to the file
    const d = await started.daemon({ stateDir });
    const resumed = await runClient(["resume", runId, "--socket", d.socketPath]);
    expect(resumed.code).toBe(3); // the receipt recovered, then the second write waits
    const after = parseTraceFile(fs.readFileSync(file, "utf8"));
    expect(after.torn).toEqual([{ line: fragmentLine, bytes: 41, why: "invalid" }]);
    expect(after.events.map((e) => e.seq)).toEqual(jsonlEvents(await runClient(["trace", runId, "--jsonl", "--socket", d.socketPath])).map((e) => e.seq));
    expect(after.events.some((e) => e.type === "run_resumed")).toBe(true);

    // a file that ends torn is printed as it is and named torn on stderr
    fs.appendFileSync(file, '{"seq":1000,"at":1,');
    const shown = await runClient(["trace", runId, "--file", "--socket", d.socketPath]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('{"seq":1000,"at":1,');
    expect(shown.stderr).toContain("is torn");
  }, 600_000);
});

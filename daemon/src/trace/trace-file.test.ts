import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseTraceFile } from "../contracts/trace-file.js";
import { Ledger } from "../store/ledger.js";
import { insertTestRun } from "../store/ledger.testkit.js";
import { exportJsonl } from "./export.js";
import { capUtf8, readTraceFile, TraceFileWriter, traceFilePath } from "./trace-file.js";
import { isMiniAgentError } from "../errors.js";
import { Trace } from "./trace.js";

/** a run_created payload that fits its schema (contracts/trace-event.ts) */
const CREATED = { task: "t", model: "replay", backend: "container" };

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const CANARY = "canary-credential-7f3a9c2e51d84b6f";
const AWS = "AKIAIOSFODNN7EXAMPLE";
const BEARER = "Authorization: Bearer abcdefghijklmnop1234567890";

function setup(opts: { contentCapBytes?: number; stateDir?: string } = {}) {
  const stateDir = opts.stateDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-tracefile-"));
  if (!opts.stateDir) dirs.push(stateDir);
  const ledger = new Ledger(
    path.join(stateDir, "ledger.sqlite"),
    () => 5,
    () => [CANARY],
  );
  if (!ledger.findRun("run_1"))
    insertTestRun(ledger, { record: { workspace: path.join(stateDir, "ws"), control_dir: path.join(stateDir, "control", "run_1") } });
  const warnings: Array<Record<string, unknown>> = [];
  const log = { warn: (obj: Record<string, unknown>) => void warnings.push(obj) };
  const writer = new TraceFileWriter({ stateDir, ledger, log, ...(opts.contentCapBytes !== undefined && { contentCapBytes: opts.contentCapBytes }) });
  let clock = 1000;
  const trace = new Trace(ledger, () => clock++, writer);
  const file = traceFilePath(stateDir, "run_1") as string;
  const read = () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "");
  return { stateDir, ledger, trace, writer, file, read, warnings };
}

const result = (data: unknown) => ({ call_id: "call_1", ok: true, data, error: null, truncated: false });

describe("trace file writer", () => {
  it("writes each event as it is appended: the trace --jsonl line plus at and content, file 0600 in a 0700 folder", () => {
    const t = setup();
    t.trace.append("run_1", { type: "run_created", payload: { ...CREATED, where: `${t.stateDir}/ws/src` } });
    expect(parseTraceFile(t.read()).events.map((e) => e.seq)).toEqual([1]);
    t.trace.append("run_1", { type: "plan_recorded", payload: { text: "fix it" }, content: { kind: "model_text", text: "fix it" } });
    t.trace.append("run_1", { type: "tool_proposed", call_id: "call_1", payload: { name: "read_file", arguments: { path: "a.js" } } });
    t.trace.append("run_1", {
      type: "tool_observed",
      call_id: "call_1",
      payload: { tool: "read_file", ok: true, error: null, truncated: false },
      content: { kind: "observation", tool: "read_file", result: result({ text: "héllo" }) },
    });
    expect(fs.statSync(t.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(t.file)).mode & 0o777).toBe(0o700);

    const parsed = parseTraceFile(t.read());
    expect(parsed.torn).toEqual([]);
    const run = t.ledger.getRun("run_1");
    const jsonl = exportJsonl(t.trace.since("run_1", 0), { workspace: run.record.workspace, controlDir: run.record.control_dir, stateDir: t.stateDir });
    const expected = jsonl
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(parsed.events.map(({ at: _a, content: _c, ...rest }) => rest)).toEqual(expected);
    expect(parsed.events[0]?.payload.where).toBe("<workspace>/src");
    expect(parsed.events.map((e) => e.at)).toEqual([1000, 1001, 1002, 1003]);
    expect(parsed.events[1]?.content).toEqual({ kind: "model_text", text: "fix it", bytes: 6, truncated: false });
    const obs = parsed.events[3]?.content;
    expect(obs?.kind).toBe("observation");
    // the model view's envelope, as the model is shown it
    expect(JSON.parse(obs?.text ?? "")).toMatchObject({ untrusted_workspace_data: true, tool: "read_file", call_id: "call_1", data: { text: "héllo" } });
    // the content is for the file only: the ledger's event rows never hold it
    const rows = t.ledger.db.prepare("SELECT payload FROM events WHERE run_id = 'run_1'").all() as Array<{ payload: string }>;
    expect(rows.some((r) => r.payload.includes("untrusted_workspace_data"))).toBe(false);
  });

  it("regression: an event appended in a transaction that rolls back never reaches the file, and a committed one only after the commit", () => {
    const t = setup();
    t.trace.append("run_1", { type: "run_created", payload: CREATED });
    expect(() =>
      t.ledger.tx(() => {
        t.trace.append("run_1", { type: "plan_recorded", payload: { text: "lost" }, content: { kind: "model_text", text: "lost" } });
        throw new Error("boom");
      }),
    ).toThrow("boom");
    t.ledger.tx(() => {
      t.trace.append("run_1", { type: "plan_recorded", payload: { text: "kept" } });
      // an inner transaction that rolls back takes its own event with it; the outer one still commits
      try {
        t.ledger.tx(() => {
          t.trace.append("run_1", { type: "model_retry", payload: { attempt: 1, code: "model_error" } });
          throw new Error("inner");
        });
      } catch {
        // the outer transaction goes on
      }
      // not yet committed: not yet in the file
      expect(parseTraceFile(t.read()).events.map((e) => e.seq)).toEqual([1]);
      t.trace.append("run_1", { type: "model_requested", payload: { model: "replay", attempt: 0 } });
    });
    const events = parseTraceFile(t.read()).events;
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, "run_created"],
      [2, "plan_recorded"],
      [3, "model_requested"],
    ]);
    expect(t.read()).not.toContain("lost");
    expect(events.map((e) => e.seq)).toEqual(t.trace.since("run_1", 0).map((e) => e.seq));
  });

  it("regression: a planted AWS key, bearer token and the daemon's credential never reach the file (model text or observation)", () => {
    const t = setup();
    const secretText = `key ${AWS} and ${BEARER} and ${CANARY}`;
    t.trace.append("run_1", { type: "plan_recorded", payload: { text: "p" }, content: { kind: "model_text", text: secretText } });
    t.trace.append("run_1", {
      type: "tool_observed",
      call_id: "call_1",
      payload: { tool: "read_file", ok: true, error: null, truncated: false },
      content: {
        kind: "observation",
        tool: "read_file",
        result: result({ text: `-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n${secretText}` }),
      },
    });
    const text = t.read();
    expect(parseTraceFile(text).events).toHaveLength(2);
    for (const s of [AWS, "abcdefghijklmnop1234567890", CANARY, "MIIEow"]) expect(text).not.toContain(s);
    expect(text).toContain("[redacted]");
  });

  it("caps content per event on a UTF-8 boundary: bytes is the size before the cap, truncated says it was cut", () => {
    const t = setup({ contentCapBytes: 100 });
    const long = "é".repeat(80); // 160 bytes; 100 is the second byte of a character
    t.trace.append("run_1", { type: "plan_recorded", payload: { text: "p" }, content: { kind: "model_text", text: long } });
    const c = parseTraceFile(t.read()).events[0]?.content;
    expect(c).toEqual({ kind: "model_text", text: "é".repeat(50), bytes: 160, truncated: true });
    expect(capUtf8("aé", 2)).toEqual({ text: "a", bytes: 3, truncated: true });
    expect(capUtf8("abc", 3)).toEqual({ text: "abc", bytes: 3, truncated: false });
  });

  it("regression: a failed write (a symlink planted at the file's name) is logged once and never stops the run or follows the link", () => {
    const t = setup();
    const target = path.join(t.stateDir, "elsewhere.txt");
    fs.writeFileSync(target, "untouched");
    fs.mkdirSync(path.dirname(t.file), { recursive: true, mode: 0o700 });
    fs.symlinkSync(target, t.file);
    expect(t.trace.append("run_1", { type: "run_created", payload: CREATED })).toBe(1);
    expect(t.trace.append("run_1", { type: "plan_recorded", payload: { text: "p" }, content: { kind: "model_text", text: "p" } })).toBe(2);
    expect(fs.readFileSync(target, "utf8")).toBe("untouched");
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]?.runId).toBe("run_1");
    expect(t.trace.since("run_1", 0).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("regression: a payload that does not fit its event type is an internal error and nothing is written, in the ledger or the file (payloads were untyped records)", () => {
    const t = setup();
    t.trace.append("run_1", { type: "run_created", payload: CREATED });
    const before = t.read();
    let thrown: unknown;
    try {
      t.ledger.tx(() => {
        t.trace.append("run_1", { type: "plan_recorded", payload: { text: "kept" } });
        // `ok` must be a boolean: a writer that got it wrong must not leave a line readers cannot parse
        t.trace.append("run_1", { type: "tool_observed", call_id: "c1", payload: { tool: "read_file", ok: "yes", error: null, truncated: false } as never });
      });
    } catch (err) {
      thrown = err;
    }
    expect(isMiniAgentError(thrown, "internal")).toBe(true);
    expect((thrown as Error).message).toContain("tool_observed");
    // the transaction rolled back whole: not even the good event before it is there
    expect(t.trace.since("run_1", 0).map((e) => e.type)).toEqual(["run_created"]);
    expect(t.read()).toBe(before);
    expect(parseTraceFile(t.read()).torn).toEqual([]);
  });

  it("regression: the trace folder removed during a run does not crash it", () => {
    const t = setup();
    t.trace.append("run_1", { type: "run_created", payload: CREATED });
    fs.rmSync(path.dirname(t.file), { recursive: true, force: true });
    expect(t.trace.append("run_1", { type: "plan_recorded", payload: { text: "p" } })).toBe(2);
    expect(t.trace.since("run_1", 0)).toHaveLength(2);
  });

  it("regression: reopened after a crash cut the last line at ANY byte, the fragment is terminated, new events are never glued onto it, and the lost event is back-filled", () => {
    const t = setup();
    t.trace.append("run_1", { type: "run_created", payload: CREATED });
    t.trace.append("run_1", { type: "plan_recorded", payload: { text: "a plan" }, content: { kind: "model_text", text: "a plan" } });
    t.writer.closeAll(); // the crashed process's descriptor is gone
    const full = fs.readFileSync(t.file);
    const lastStart = full.lastIndexOf(0x0a, full.length - 2) + 1;
    const lastBytes = full.length - 1 - lastStart;
    for (let k = 0; k <= lastBytes; k++) {
      const cut = full.subarray(0, lastStart + k);
      fs.writeFileSync(t.file, cut);
      const before = parseTraceFile(cut.toString("utf8"));
      expect(before.events.map((e) => e.seq)).toEqual([1]);
      expect(before.torn).toEqual(k === 0 ? [] : [{ line: 2, bytes: k, why: "no_newline" }]);

      // the daemon restarts (a new writer) and the run goes on
      const again = new TraceFileWriter({ stateDir: t.stateDir, ledger: t.ledger, log: { warn: () => {} } });
      const seq = new Trace(t.ledger, () => 9, again).append("run_1", { type: "run_resumed", payload: { from: "interrupted" } });
      again.closeAll();
      const after = parseTraceFile(t.read());
      const whole = k === lastBytes;
      // the event the crash cut (and every event committed since) is written again from the ledger, in seq order
      expect(after.events.map((e) => e.seq)).toEqual(t.trace.since("run_1", 0).map((e) => e.seq));
      expect(after.events.at(-1)?.seq).toBe(seq);
      expect(after.torn).toEqual(k === 0 || whole ? [] : [{ line: 2, bytes: k, why: "invalid" }]);
    }
  });

  it("serves the file as written, and refuses one over the cap, a missing one and a symlink with a code (never a stack)", async () => {
    const t = setup();
    t.trace.append("run_1", { type: "run_created", payload: CREATED });
    expect(await readTraceFile(t.stateDir, "run_1")).toBe(t.read());
    const tooBig = await readTraceFile(t.stateDir, "run_1", 10).catch((e: unknown) => e);
    expect(isMiniAgentError(tooBig, "payload_too_large")).toBe(true);
    expect((tooBig as Error).message).toContain(t.file);
    const none = await readTraceFile(t.stateDir, "run_2").catch((e: unknown) => e);
    expect(isMiniAgentError(none, "not_found")).toBe(true);
    fs.symlinkSync(t.file, path.join(path.dirname(t.file), "run_3.jsonl"));
    expect(isMiniAgentError(await readTraceFile(t.stateDir, "run_3").catch((e: unknown) => e), "not_found")).toBe(true);
    expect(isMiniAgentError(await readTraceFile(t.stateDir, "../x").catch((e: unknown) => e), "invalid_request")).toBe(true);
  });

  it("regression: events committed but never written (a crash between commit and write, a run from before trace files) are back-filled in seq order, without content", () => {
    const t = setup();
    const plain = new Trace(t.ledger, () => 1); // no trace file, as before this existed
    plain.append("run_1", { type: "run_created", payload: CREATED });
    plain.append("run_1", { type: "plan_recorded", payload: { text: "p" }, content: { kind: "model_text", text: "p" } });
    t.trace.append("run_1", { type: "model_requested", payload: { model: "replay", attempt: 0 }, content: { kind: "model_text", text: "now" } });
    const events = parseTraceFile(t.read()).events;
    expect(events.map((e) => [e.seq, e.content?.text ?? null])).toEqual([
      [1, null],
      [2, null],
      [3, "now"],
    ]);
    // and a second writer (a restart) finds where the file ends: nothing is written twice
    t.writer.closeAll();
    plain.append("run_1", { type: "model_retry", payload: { attempt: 1, code: "model_error" } });
    const again = new TraceFileWriter({ stateDir: t.stateDir, ledger: t.ledger, log: { warn: () => {} } });
    new Trace(t.ledger, () => 9, again).append("run_1", { type: "run_resumed", payload: { from: "interrupted" } });
    expect(parseTraceFile(t.read()).events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });
});

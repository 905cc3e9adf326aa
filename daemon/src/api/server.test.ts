import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type http from "node:http";
import { pino } from "pino";
import { Agent, request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiResponse, ErrorBody } from "../contracts/api.js";
import { MiniAgentError } from "../errors.js";
import type { CreateRunInput, RunService, RunView } from "../runtime/service.js";
import { closeServer, listenTcp, listenUnix } from "./listen.js";
import type { ApiDeps, GateVerdict } from "./ports.js";
import { createApiServer } from "./server.js";
import { INERT_API_DEPS } from "./server.testkit.js";

/** A hand-built RunService that records calls; the server, socket and HTTP are real. */
function fakeRunService() {
  const calls: string[] = [];
  const inputs: CreateRunInput[] = [];
  const runs = new Map<string, RunView>();
  const view = (id: string, input?: CreateRunInput): RunView => ({
    run_id: id,
    status: "running",
    reason: null,
    task: "t",
    workspace: input?.workspace ?? "/w",
    model: input?.model ?? "replay",
    backend: input?.backend ?? "container",
    counters: { model_turns: 0, tool_calls: 0, writes: 0, elapsed_ms: 0, prompt_tokens: 0, completion_tokens: 0 },
    last_tool: null,
    tests: null,
    pending_action: null,
    verification: null,
    exhausted_budget: null,
    last_seq: 0,
  });
  const get = (id: string) => {
    const r = runs.get(id);
    if (!r) throw new MiniAgentError("run_not_found", `no run ${id}`);
    return r;
  };
  const svc: RunService = {
    async createRun(input) {
      calls.push(`create:${input.workspace}`);
      inputs.push(input);
      if (input.workspace === "/boom") throw new Error("secret stack detail at /etc/passwd");
      const r = view(`run-${runs.size + 1}`, input);
      runs.set(r.run_id, r);
      return r;
    },
    getRun: (id) => get(id),
    listRuns: () => [...runs.values()],
    async approve(id, action) {
      calls.push(`approve:${id}:${action}`);
      get(id);
      throw new MiniAgentError("approval_unknown", `no pending action ${action}`);
    },
    async reject(id, action, reason) {
      calls.push(`reject:${id}:${action}:${reason}`);
      return get(id);
    },
    async resume(id) {
      return get(id);
    },
    async cancel(id) {
      calls.push(`cancel:${id}`);
      return get(id);
    },
    async events(id, since, waitMs) {
      calls.push(`events:${id}:${since}:${waitMs}`);
      return [];
    },
    traceJsonl: (id) => (get(id), '{"seq":1}\n'),
    traceFile: async (id) => (get(id), '{"seq":1,"at":5}\n'),
    async diff(id) {
      get(id);
      return "";
    },
    async recoverAtStartup() {},
    async shutdown() {},
  };
  return { svc, calls, inputs };
}

let dir: string;
let servers: http.Server[];
let gate: GateVerdict;
let fake: ReturnType<typeof fakeRunService>;
let agent: Agent;
let socketPath: string;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-api-"));
  socketPath = path.join(dir, "d.sock");
  fake = fakeRunService();
  gate = { ok: true };
  const deps: ApiDeps = {
    runService: fake.svc,
    isolation: {
      runProbes: async () => ({ passed: true }),
      latestReport: async () => null,
      health: async () => ({
        engine: { reachable: false, version: null, runtime: "runc", image_digest: null, image_present: false, error: "unreachable" },
        isolation: { verdict: "unavailable", generated_at: null, reason: "runtime_unavailable" },
      }),
    },
    liveGate: { check: async () => gate },
    policy: INERT_API_DEPS.policy,
    capture: INERT_API_DEPS.capture,
    drafter: INERT_API_DEPS.drafter,
    version: "0.1.0",
    pid: 1,
    maxBodyBytes: 4096,
    maxWaitMs: 50,
  };
  const log = pino({ level: "silent" });
  servers = [createApiServer({ deps, log }), createApiServer({ deps, log, token: "t".repeat(20) })];
  await listenUnix(servers[0]!, socketPath);
  agent = new Agent({ connect: { socketPath } });
});

afterEach(async () => {
  await agent.close();
  for (const s of servers) {
    s.closeAllConnections();
    await closeServer(s);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function call(method: "GET" | "POST", p: string, body?: string, extra: { dispatcher?: Agent; origin?: string; headers?: Record<string, string> } = {}) {
  const res = await request(`${extra.origin ?? "http://localhost"}${p}`, {
    method,
    dispatcher: extra.dispatcher ?? agent,
    ...(body !== undefined && { body }),
    headers: { "content-type": "application/json", ...extra.headers },
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: text.startsWith("{") ? (JSON.parse(text) as unknown) : null };
}

const validCreate = { workspace: "/tmp/ws-new", fixture_dir: "/fixtures/linkcheck" };

describe("API over the Unix socket", () => {
  it("creates the socket with mode 0600", () => {
    expect(fs.statSync(socketPath).mode & 0o777).toBe(0o600);
  });

  it("creates a run and answers with the shared response union", async () => {
    const r = await call("POST", "/v1/runs", JSON.stringify(validCreate));
    expect(r.status).toBe(201);
    const parsed = ApiResponse.parse(r.json);
    expect(parsed.kind).toBe("run");
    expect(fake.calls).toEqual(["create:/tmp/ws-new"]);
  });

  it.each([
    ["malformed JSON", "{not json", "invalid_request"],
    ["an unknown field", JSON.stringify({ ...validCreate, yes: true }), "invalid_request"],
    ["a relative workspace", JSON.stringify({ ...validCreate, workspace: "ws" }), "invalid_request"],
    ["both fixture and task spec missing", JSON.stringify({ workspace: "/tmp/x" }), "invalid_request"],
    ["a wrong model", JSON.stringify({ ...validCreate, model: "gpt" }), "invalid_request"],
    ["an absolute sandbox_include glob", JSON.stringify({ ...validCreate, sandbox_include: ["/etc/shadow"] }), "invalid_request"],
    ["a sandbox_include glob with '..'", JSON.stringify({ ...validCreate, sandbox_include: ["a/../../.env"] }), "invalid_request"],
    ["a sandbox_include that is not a list of strings", JSON.stringify({ ...validCreate, sandbox_include: ".env.test" }), "invalid_request"],
    [
      "more than 32 sandbox_include globs",
      JSON.stringify({ ...validCreate, sandbox_include: Array.from({ length: 33 }, (_, i) => `f${i}`) }),
      "invalid_request",
    ],
  ])("refuses %s with 400 and never calls the run service", async (_name, body, code) => {
    const r = await call("POST", "/v1/runs", body);
    expect(r.status).toBe(400);
    expect(ErrorBody.parse(r.json).error.code).toBe(code);
    expect(fake.calls).toEqual([]);
  });

  it("passes the sandbox_include opt-in to the run service, and none when it is not given", async () => {
    expect((await call("POST", "/v1/runs", JSON.stringify({ ...validCreate, sandbox_include: [".env.test"] }))).status).toBe(201);
    expect((await call("POST", "/v1/runs", JSON.stringify({ ...validCreate, workspace: "/tmp/ws-2" }))).status).toBe(201);
    expect(fake.inputs.map((i) => i.sandboxInclude)).toEqual([[".env.test"], undefined]);
  });

  it("refuses an oversize body with 413 before parsing it", async () => {
    const r = await call("POST", "/v1/runs", JSON.stringify({ ...validCreate, pad: "x".repeat(10_000) }));
    expect(r.status).toBe(413);
    expect(ErrorBody.parse(r.json).error.code).toBe("payload_too_large");
    expect(fake.calls).toEqual([]);
  });

  it("answers 404 for unknown runs, actions and endpoints", async () => {
    expect((await call("GET", "/v1/runs/nope")).status).toBe(404);
    const a = await call("POST", "/v1/runs/nope/actions/a1/approve", "");
    expect(a.status).toBe(404);
    expect(ErrorBody.parse(a.json).error.code).toBe("run_not_found");
    await call("POST", "/v1/runs", JSON.stringify(validCreate));
    const b = await call("POST", "/v1/runs/run-1/actions/zz/approve", "");
    expect([b.status, ErrorBody.parse(b.json).error.code]).toEqual([404, "approval_unknown"]);
    const c = await call("GET", "/v1/nothing");
    expect([c.status, ErrorBody.parse(c.json).error.code]).toEqual([404, "not_found"]);
  });

  it("refuses a bad id, unknown query parameters and an approve body with fields", async () => {
    expect((await call("GET", "/v1/runs/..%2F..%2Fetc")).status).toBe(400);
    expect((await call("GET", "/v1/runs?x=1")).status).toBe(400);
    await call("POST", "/v1/runs", JSON.stringify(validCreate));
    fake.calls.length = 0;
    expect((await call("POST", "/v1/runs/run-1/actions/a1/approve", JSON.stringify({ all: true }))).status).toBe(400);
    expect((await call("POST", "/v1/runs/run-1/actions/a1/reject", JSON.stringify({}))).status).toBe(400);
    expect((await call("GET", "/v1/runs/run-1/events?since=-1")).status).toBe(400);
    expect(fake.calls).toEqual([]);
  });

  it("caps the long-poll wait at the daemon's maximum", async () => {
    await call("POST", "/v1/runs", JSON.stringify(validCreate));
    const r = await call("GET", "/v1/runs/run-1/events?since=3&wait_ms=60000");
    expect(r.status).toBe(200);
    expect(ApiResponse.parse(r.json).kind).toBe("events");
    expect(fake.calls).toContain("events:run-1:3:50");
  });

  it("refuses a live run when the gate says no, before the run service is called", async () => {
    gate = { ok: false, code: "isolation_unverified", reason: "report_stale", refresh_command: "mini-agent-client probe" };
    const r = await call("POST", "/v1/runs", JSON.stringify({ ...validCreate, model: "live" }));
    expect(r.status).toBe(412);
    const e = ErrorBody.parse(r.json).error;
    expect(e.code).toBe("isolation_unverified");
    expect(e.details).toEqual({ reason: "report_stale", refresh_command: "mini-agent-client probe" });
    expect(fake.calls).toEqual([]);
  });

  it("turns an unexpected exception into a 500 without its message or stack", async () => {
    const r = await call("POST", "/v1/runs", JSON.stringify({ ...validCreate, workspace: "/boom" }));
    expect(r.status).toBe(500);
    expect(r.text).not.toContain("passwd");
    expect(r.text).not.toContain("at ");
    expect(ErrorBody.parse(r.json).error.code).toBe("internal");
  });

  it("serves the trace as JSONL and health as data", async () => {
    await call("POST", "/v1/runs", JSON.stringify(validCreate));
    const t = await call("GET", "/v1/runs/run-1/trace");
    expect(t.text).toBe('{"seq":1}\n');
    const h = ApiResponse.parse((await call("GET", "/v1/health")).json);
    expect(h.kind === "health" && h.ok).toBe(false);
  });
});

describe("API over loopback TCP", () => {
  it("requires the bearer token and compares it exactly", async () => {
    const { port } = await listenTcp(servers[1]!, "127.0.0.1", 0);
    const tcp = new Agent();
    const origin = `http://127.0.0.1:${port}`;
    try {
      const none = await call("GET", "/v1/runs", undefined, { dispatcher: tcp, origin });
      expect([none.status, ErrorBody.parse(none.json).error.code]).toEqual([401, "unauthorized"]);
      const wrong = await call("GET", "/v1/runs", undefined, { dispatcher: tcp, origin, headers: { authorization: `Bearer ${"t".repeat(19)}u` } });
      expect(wrong.status).toBe(401);
      const prefix = await call("GET", "/v1/runs", undefined, { dispatcher: tcp, origin, headers: { authorization: `Bearer ${"t".repeat(19)}` } });
      expect(prefix.status).toBe(401);
      const create = await call("POST", "/v1/runs", JSON.stringify(validCreate), { dispatcher: tcp, origin, headers: { authorization: "Bearer nope" } });
      expect(create.status).toBe(401);
      expect(fake.calls).toEqual([]);
      const ok = await call("GET", "/v1/runs", undefined, { dispatcher: tcp, origin, headers: { authorization: `Bearer ${"t".repeat(20)}` } });
      expect(ok.status).toBe(200);
    } finally {
      await tcp.close();
    }
  });
});

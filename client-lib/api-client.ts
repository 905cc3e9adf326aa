import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import type { z } from "zod";
import { ApiResponse, ErrorBody, type ApiResponseOf } from "../daemon/src/contracts/api-responses.js";
import type {
  CreateRunRequest,
  DraftTaskRequest,
  SandboxExecRequest,
  CheckApprovalRequest,
  SandboxTestsRequest,
  VerifyBeginRequest,
  VerifyRequest,
} from "../daemon/src/contracts/api.js";
import type { Runtime } from "../daemon/src/contracts/sandbox.js";
import type { Budgets } from "../daemon/src/contracts/task-spec.js";
import { MiniAgentError } from "../daemon/src/errors.js";

/**
 * The daemon's /v1 API over its Unix socket. Every answer is parsed with the
 * shared zod union; a refusal becomes MiniAgentError with the daemon's code,
 * and "nobody listens" becomes `daemon_unreachable` with the command that
 * starts a daemon, never a raw ECONNREFUSED.
 *
 * node:http, not undici: one short request per command over a local socket
 * needs no pool, and loading undici was most of the client's start-up
 * (issue 10 item 16). The answer schemas are zod/mini for the same reason.
 */
export interface ApiTarget {
  socketPath: string;
  /** shown in the "how to start a daemon" hint */
  stateDir: string;
  /** true when the socket was named with --socket / $MINI_AGENT_SOCKET, so the hint must name it too */
  explicitSocket?: boolean;
}

const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ENOENT", "ECONNRESET", "ENOTSOCK", "EPIPE"]);

/** Generous: `probe` starts many containers (slower under runsc); long-polls are capped by the daemon anyway. */
const REQUEST_TIMEOUT_MS = 600_000;

export function startHint(target: ApiTarget): string {
  const flags = `--state-dir ${target.stateDir}${target.explicitSocket ? ` --socket ${target.socketPath}` : ""}`;
  return [
    `no mini-agent-daemon answers on ${target.socketPath}.`,
    `Start one (it runs in the foreground; add & or use another terminal):`,
    `  mini-agent-daemon ${flags}`,
    `or, from a checkout after \`npm run build\`:`,
    `  npm run daemon -- ${flags}`,
  ].join("\n");
}

export class ApiClient {
  constructor(private readonly target: ApiTarget) {}

  /** nothing to release: every request has its own connection */
  async close(): Promise<void> {}

  createRun(body: z.input<typeof CreateRunRequest>) {
    return this.json("POST", "/v1/runs", body, "run");
  }
  /** the task an ad-hoc run would use (`run --goal ... --print-task`); creates nothing */
  draftTask(body: z.input<typeof DraftTaskRequest>) {
    return this.json("POST", "/v1/tasks/draft", body, "task_draft");
  }
  /** the workspace's tests in a fresh proven sandbox, no model and no run (`mcp` sandbox_run_tests) */
  sandboxTests(body: z.input<typeof SandboxTestsRequest>) {
    return this.json("POST", "/v1/checks/tests", body, "sandbox_tests");
  }
  /** one argv under the command policy in a fresh sandbox (`mcp` sandbox_exec) */
  sandboxExec(body: z.input<typeof SandboxExecRequest>) {
    return this.json("POST", "/v1/checks/exec", body, "sandbox_exec");
  }
  /** a person's answer to a command sandbox_exec asked about (`approve chk_ID`, `reject chk_ID`) */
  decideCheck(id: string, body: z.input<typeof CheckApprovalRequest>) {
    return this.json("POST", `/v1/checks/approvals/${encodeURIComponent(id)}`, body, "check_approval");
  }
  /** records the workspace's baseline in the daemon's state dir (`mcp` verify_begin) */
  verifyBegin(body: z.input<typeof VerifyBeginRequest>) {
    return this.json("POST", "/v1/checks/baseline", body, "verify_begun");
  }
  /** the host Verifier's verdict on the workspace against that baseline (`mcp` verify) */
  verify(body: z.input<typeof VerifyRequest>) {
    return this.json("POST", "/v1/checks/verify", body, "verification");
  }
  listRuns() {
    return this.json("GET", "/v1/runs", undefined, "runs");
  }
  getRun(runId: string) {
    return this.json("GET", `/v1/runs/${enc(runId)}`, undefined, "run");
  }
  approve(runId: string, actionId: string) {
    return this.json("POST", `/v1/runs/${enc(runId)}/actions/${enc(actionId)}/approve`, {}, "run");
  }
  reject(runId: string, actionId: string, reason: string) {
    return this.json("POST", `/v1/runs/${enc(runId)}/actions/${enc(actionId)}/reject`, { reason }, "run");
  }
  resume(runId: string, budgets?: Partial<Budgets>) {
    return this.json("POST", `/v1/runs/${enc(runId)}/resume`, budgets ? { budgets } : {}, "run");
  }
  cancel(runId: string) {
    return this.json("POST", `/v1/runs/${enc(runId)}/cancel`, {}, "run");
  }
  events(runId: string, since: number, waitMs: number) {
    return this.json("GET", `/v1/runs/${enc(runId)}/events?since=${since}&wait_ms=${waitMs}`, undefined, "events");
  }
  diff(runId: string) {
    return this.json("GET", `/v1/runs/${enc(runId)}/diff`, undefined, "diff");
  }
  /** `eval capture`: writes the finished run as an eval case folder at `out` (absolute) */
  capture(runId: string, out: string) {
    return this.json("POST", `/v1/runs/${enc(runId)}/capture`, { out }, "case_captured");
  }
  probe(runtime?: Runtime, family?: string) {
    return this.json("POST", "/v1/probes", { ...(runtime && { runtime }), ...(family && { family }) }, "isolation_report");
  }
  isolationReport() {
    return this.json("GET", "/v1/isolation-report", undefined, "isolation_report");
  }
  health() {
    return this.json("GET", "/v1/health", undefined, "health");
  }
  /** the dependency layers (`env list`) */
  envLayers() {
    return this.json("GET", "/v1/env/layers", undefined, "env_layers");
  }
  /** `env build`: an install in an install sandbox becomes the workspace's dependency layer */
  envBuild(body: { workspace: string; install: string; allow_hosts: string[] }) {
    return this.json("POST", "/v1/env/build", body, "env_build");
  }
  /** `env gc`: removes (or, dry, names) unused layers last used more than olderThanMs ago */
  envGc(olderThanMs: number, dryRun: boolean) {
    return this.json("POST", "/v1/env/gc", { older_than_ms: olderThanMs, dry_run: dryRun }, "env_layers");
  }
  /** `gc`: removes (or, dry, names) the files finished runs left; absent options take the daemon's default retention */
  gc(body: { older_than_ms?: number; keep?: number; dry_run: boolean }) {
    return this.json("POST", "/v1/gc", body, "gc");
  }
  /** the effective policy for a profile and a workspace folder (`policy show`) */
  policy(profile?: string, workspace?: string) {
    const q = new URLSearchParams();
    if (profile !== undefined) q.set("profile", profile);
    if (workspace !== undefined) q.set("workspace", workspace);
    const qs = q.toString();
    return this.json("GET", `/v1/policy${qs === "" ? "" : `?${qs}`}`, undefined, "policy");
  }
  async trace(runId: string): Promise<string> {
    const res = await this.send("GET", `/v1/runs/${enc(runId)}/trace`, undefined);
    if (res.status !== 200) this.refusal(res.status, res.text);
    return res.text;
  }

  /** the run's trace file as the daemon wrote it (`<state>/traces/<run_id>.jsonl`): events plus model text and observations */
  async traceFile(runId: string): Promise<string> {
    const res = await this.send("GET", `/v1/runs/${enc(runId)}/trace-file`, undefined);
    if (res.status !== 200) this.refusal(res.status, res.text);
    return res.text;
  }

  private async json<K extends ApiResponse["kind"]>(method: "GET" | "POST", path: string, body: unknown, kind: K): Promise<ApiResponseOf<K>> {
    const res = await this.send(method, path, body);
    if (res.status < 200 || res.status >= 300) this.refusal(res.status, res.text);
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      throw new MiniAgentError("internal", `the daemon answered ${method} ${path} with something that is not JSON`);
    }
    const parsed = ApiResponse.safeParse(json);
    if (!parsed.success) {
      // rare, so the classic zod behind the shared error text is loaded only here
      const { describeZodError } = await import("../daemon/src/contracts/common.js");
      throw new MiniAgentError("internal", `unexpected answer from the daemon: ${describeZodError(parsed.error)}`);
    }
    if (parsed.data.kind !== kind) throw new MiniAgentError("internal", `expected a ${kind} answer, got ${parsed.data.kind}`);
    return parsed.data as ApiResponseOf<K>;
  }

  private refusal(status: number, text: string): never {
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* fall through */
    }
    const parsed = ErrorBody.safeParse(json);
    if (parsed.success) {
      const e = parsed.data.error;
      throw new MiniAgentError(e.code, e.message, e.details ? { details: e.details } : {});
    }
    throw new MiniAgentError("internal", `the daemon answered HTTP ${status} without an error body`);
  }

  private async send(method: "GET" | "POST", path: string, body: unknown): Promise<{ status: number; text: string }> {
    try {
      return await request(this.target.socketPath, method, path, body === undefined ? undefined : JSON.stringify(body));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EACCES") {
        throw new MiniAgentError("daemon_unreachable", `permission denied on ${this.target.socketPath}: the daemon belongs to another user`);
      }
      if (code && UNREACHABLE_CODES.has(code)) {
        const exists = fs.existsSync(this.target.socketPath);
        throw new MiniAgentError(
          "daemon_unreachable",
          startHint(this.target) + (exists ? "\n(the socket file exists but nobody listens: the daemon stopped or crashed)" : ""),
        );
      }
      throw new MiniAgentError("daemon_unreachable", `cannot talk to the daemon on ${this.target.socketPath} (${code ?? "connection error"})`, { cause: err });
    }
  }
}

/**
 * One request on its own connection, closed after the answer, so nothing keeps
 * the process alive. The connection is made here (createConnection), not by
 * an http.Agent: the agent's per-request set-up cost ~15 ms of CPU, a fifth of
 * what the client spends beyond `node -e 0`.
 */
function request(socketPath: string, method: string, path: string, body: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { host: "mini-agent", connection: "close" };
    if (body !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    const req = http.request({ createConnection: () => net.connect(socketPath), method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error("the daemon did not answer in time"), { code: "ETIMEDOUT" })));
    req.on("error", reject);
    req.end(body);
  });
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

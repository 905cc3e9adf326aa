import type { IncomingMessage } from "node:http";
import {
  ActionIdParam,
  API_VERSION,
  CaptureRequest,
  CreateRunRequest,
  DraftTaskRequest,
  EmptyRequest,
  EnvBuildRequest,
  EnvGcRequest,
  CheckApprovalId,
  CheckApprovalRequest,
  GcRequest,
  EventsQuery,
  PolicyQuery,
  ProbeRequest,
  RejectRequest,
  ResumeRequest,
  RunIdParam,
  SandboxExecRequest,
  SandboxTestsRequest,
  VerifyBeginRequest,
  VerifyRequest,
  TRACE_CONTENT_TYPE,
  type ApiResponse,
} from "../contracts/api.js";
import { createRunFromRequest } from "../runtime/create-run/index.js";
import { apiError } from "./http-errors.js";
import type { ApiDeps } from "./ports.js";
import { parseJsonBody, parseParam, parseQuery, readBody } from "./request-body.js";

/** A handler answers JSON from the shared union, or raw text (the JSONL trace). */
export type RouteResult = { json: ApiResponse; status?: number } | { text: string; contentType: string };

interface RouteCtx {
  req: IncomingMessage;
  params: string[];
  query: URLSearchParams;
  deps: ApiDeps;
}

interface Route {
  method: "GET" | "POST";
  pattern: RegExp;
  handle(ctx: RouteCtx): Promise<RouteResult>;
}

const SEG = "([^/]+)";
const route = (method: Route["method"], path: string, handle: Route["handle"]): Route => ({
  method,
  pattern: new RegExp(`^/${API_VERSION}${path.replace(/:\w+/g, SEG)}$`),
  handle,
});

function noQuery(query: URLSearchParams): void {
  for (const key of query.keys()) throw apiError("invalid_request", `unknown query parameter: ${key}`);
}

async function body<S extends Parameters<typeof parseJsonBody>[1]>(ctx: RouteCtx, schema: S, what: string) {
  return parseJsonBody(await readBody(ctx.req, ctx.deps.maxBodyBytes), schema, what);
}

/** a daemon without a container engine has no sandbox to check in, and never falls back to the host */
function checks(ctx: RouteCtx) {
  if (!ctx.deps.checks) throw apiError("runtime_unavailable", "this daemon has no container engine: workspace checks need a proven sandbox");
  return ctx.deps.checks;
}

const runId = (ctx: RouteCtx) => parseParam(ctx.params[0] ?? "", RunIdParam, "run id");
const actionId = (ctx: RouteCtx) => parseParam(ctx.params[1] ?? "", ActionIdParam, "action id");
const approvalId = (ctx: RouteCtx) => parseParam(ctx.params[0] ?? "", CheckApprovalId, "approval id");

export const ROUTES: Route[] = [
  route("POST", "/runs", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, CreateRunRequest, "create run");
    return { json: { kind: "run", run: await createRunFromRequest(ctx.deps, r) }, status: 201 };
  }),
  route("POST", "/tasks/draft", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, DraftTaskRequest, "draft task");
    const { image_family, ...rest } = r;
    const d = await ctx.deps.drafter.draft({ ...rest, ...(image_family !== undefined && { imageFamily: image_family }) });
    return {
      json: {
        kind: "task_draft",
        task: d.task,
        workspace: d.workspace,
        test_source: d.test_source,
        dirty_files: d.dirty_files,
        warnings: d.warnings,
        draft_id: d.draft_id,
      },
    };
  }),
  route("GET", "/runs", async (ctx) => {
    noQuery(ctx.query);
    return { json: { kind: "runs", runs: ctx.deps.runService.listRuns() } };
  }),
  route("GET", "/runs/:id", async (ctx) => {
    noQuery(ctx.query);
    return { json: { kind: "run", run: ctx.deps.runService.getRun(runId(ctx)) } };
  }),
  route("POST", "/runs/:id/actions/:action/approve", async (ctx) => {
    noQuery(ctx.query);
    const [id, action] = [runId(ctx), actionId(ctx)];
    await body(ctx, EmptyRequest, "approve");
    return { json: { kind: "run", run: await ctx.deps.runService.approve(id, action) } };
  }),
  route("POST", "/runs/:id/actions/:action/reject", async (ctx) => {
    noQuery(ctx.query);
    const [id, action] = [runId(ctx), actionId(ctx)];
    const r = await body(ctx, RejectRequest, "reject");
    return { json: { kind: "run", run: await ctx.deps.runService.reject(id, action, r.reason) } };
  }),
  route("POST", "/runs/:id/resume", async (ctx) => {
    noQuery(ctx.query);
    const id = runId(ctx);
    const r = await body(ctx, ResumeRequest, "resume");
    return { json: { kind: "run", run: await ctx.deps.runService.resume(id, r.budgets) } };
  }),
  route("POST", "/runs/:id/cancel", async (ctx) => {
    noQuery(ctx.query);
    const id = runId(ctx);
    await body(ctx, EmptyRequest, "cancel");
    return { json: { kind: "run", run: await ctx.deps.runService.cancel(id) } };
  }),
  route("GET", "/runs/:id/events", async (ctx) => {
    const id = runId(ctx);
    const q = parseQuery(ctx.query, EventsQuery);
    ctx.deps.runService.getRun(id); // 404 before waiting, not after
    const events = await ctx.deps.runService.events(id, q.since, Math.min(q.wait_ms, ctx.deps.maxWaitMs));
    return { json: { kind: "events", events, run: ctx.deps.runService.getRun(id) } };
  }),
  route("GET", "/runs/:id/trace", async (ctx) => {
    noQuery(ctx.query);
    return { text: ctx.deps.runService.traceJsonl(runId(ctx)), contentType: TRACE_CONTENT_TYPE };
  }),
  route("GET", "/runs/:id/trace-file", async (ctx) => {
    noQuery(ctx.query);
    return { text: await ctx.deps.runService.traceFile(runId(ctx)), contentType: TRACE_CONTENT_TYPE };
  }),
  route("GET", "/runs/:id/diff", async (ctx) => {
    noQuery(ctx.query);
    const id = runId(ctx);
    return { json: { kind: "diff", run_id: id, diff: await ctx.deps.runService.diff(id) } };
  }),
  route("POST", "/runs/:id/capture", async (ctx) => {
    noQuery(ctx.query);
    const id = runId(ctx);
    const r = await body(ctx, CaptureRequest, "capture");
    return { json: await ctx.deps.capture.capture(id, r.out), status: 201 };
  }),
  route("POST", "/probes", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, ProbeRequest, "probes");
    return { json: { kind: "isolation_report", report: await ctx.deps.isolation.runProbes(r.runtime, r.family) } };
  }),
  route("GET", "/isolation-report", async (ctx) => {
    noQuery(ctx.query);
    return { json: { kind: "isolation_report", report: await ctx.deps.isolation.latestReport() } };
  }),
  route("GET", "/policy", async (ctx) => {
    const q = parseQuery(ctx.query, PolicyQuery);
    return {
      json: ctx.deps.policy.show({ ...(q.profile !== undefined && { profile: q.profile }), ...(q.workspace !== undefined && { workspace: q.workspace }) }),
    };
  }),
  route("GET", "/env/layers", async (ctx) => {
    noQuery(ctx.query);
    return { json: ctx.deps.env ? await ctx.deps.env.list() : { kind: "env_layers", layers: [] } };
  }),
  route("POST", "/env/gc", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, EnvGcRequest, "env gc");
    if (!ctx.deps.env) return { json: { kind: "env_layers", layers: [], removed: [], dry_run: r.dry_run } };
    return { json: await ctx.deps.env.gc({ olderThanMs: r.older_than_ms, dryRun: r.dry_run }) };
  }),
  route("POST", "/env/build", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, EnvBuildRequest, "env build");
    if (!ctx.deps.env?.build) throw apiError("invalid_request", "this daemon has no install sandbox (it runs without a container engine)");
    return {
      json: await ctx.deps.env.build({
        workspace: r.workspace,
        install: r.install,
        allowHosts: r.allow_hosts,
        ...(r.image_family !== undefined && { imageFamily: r.image_family }),
        timeoutMs: r.timeout_seconds * 1000,
      }),
    };
  }),
  route("POST", "/gc", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, GcRequest, "gc");
    if (!ctx.deps.retention) throw apiError("invalid_request", "this daemon keeps no state to collect");
    return { json: { kind: "gc", ...(await ctx.deps.retention.gc({ olderThanMs: r.older_than_ms, keep: r.keep, dryRun: r.dry_run })) } };
  }),
  route("POST", "/checks/tests", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, SandboxTestsRequest, "sandbox tests");
    return { json: await checks(ctx).tests(r) };
  }),
  route("POST", "/checks/exec", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, SandboxExecRequest, "sandbox exec");
    return { json: await checks(ctx).exec(r) };
  }),
  route("GET", "/checks/approvals/:id", async (ctx) => {
    noQuery(ctx.query);
    return { json: checks(ctx).approval(approvalId(ctx)) };
  }),
  route("POST", "/checks/approvals/:id", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, CheckApprovalRequest, "check approval");
    return { json: checks(ctx).decide(approvalId(ctx), r) };
  }),
  route("POST", "/checks/baseline", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, VerifyBeginRequest, "verify begin");
    return { json: await checks(ctx).begin(r), status: 201 };
  }),
  route("POST", "/checks/verify", async (ctx) => {
    noQuery(ctx.query);
    const r = await body(ctx, VerifyRequest, "verify");
    return { json: await checks(ctx).verify(r) };
  }),
  route("GET", "/health", async (ctx) => {
    noQuery(ctx.query);
    const h = await ctx.deps.isolation.health();
    const ok = h.engine.reachable && h.engine.image_present && h.isolation.verdict === "passed";
    const stateDir = ctx.deps.retention ? { state_dir: await ctx.deps.retention.stateDir() } : {};
    return { json: { kind: "health", ok, daemon: { pid: ctx.deps.pid, version: ctx.deps.version, api: API_VERSION }, ...h, ...stateDir } };
  }),
];

/** Finds the route for a path; a known path with the wrong method is a 405, an unknown path a 404. */
export function matchRoute(method: string, pathname: string): { route: Route; params: string[] } | { error: "not_found" | "method_not_allowed" } {
  let pathKnown = false;
  for (const r of ROUTES) {
    const m = r.pattern.exec(pathname);
    if (!m) continue;
    pathKnown = true;
    if (r.method === method) return { route: r, params: m.slice(1).map(decodeSegment) };
  }
  return { error: pathKnown ? "method_not_allowed" : "not_found" };
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return "\0invalid"; // fails the Id schema with a clear message
  }
}

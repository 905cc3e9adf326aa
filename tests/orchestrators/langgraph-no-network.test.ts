import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containerExecutor, leftovers, LINKCHECK, service, tempDir } from "../runtime/harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

/**
 * Issue 14: no request from the framework. LangChain's tracing switches are
 * set and point at a counting local endpoint, and every proxy variable points
 * at a closed local port; a whole langgraph run (both pauses, both resumes,
 * the Verifier) must complete and the endpoint must see nothing.
 */
describe("a langgraph run makes no network request, even with LangSmith tracing switched on in the environment", () => {
  let root: string;
  let server: http.Server;
  const seen: string[] = [];
  const runIds: string[] = [];
  const saved = { ...process.env };

  beforeAll(async () => {
    root = tempDir("lg-net");
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // a port that was free a moment ago: nothing listens there
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const proxy = `http://127.0.0.1:${closed}`;
    Object.assign(process.env, {
      LANGSMITH_TRACING: "true",
      LANGSMITH_TRACING_V2: "true",
      LANGCHAIN_TRACING_V2: "true",
      LANGCHAIN_TRACING: "true",
      LANGSMITH_ENDPOINT: url,
      LANGCHAIN_ENDPOINT: url,
      LANGSMITH_API_KEY: "lsv2_pt_test",
      LANGCHAIN_API_KEY: "lsv2_pt_test",
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      // the engine is reached over its Unix socket, never through a proxy
      NO_PROXY: "",
    });
  });
  afterAll(async () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    await new Promise((r) => server.close(r));
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("completes fixtures/linkcheck with two approvals and the counting endpoint sees no request", async () => {
    const stateDir = path.join(root, "state");
    const executor = await containerExecutor(stateDir);
    const logs: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const runs = service(stateDir, executor, { logger: pino({ level: "info" }, sink) });
    try {
      const created = await runs.createRun({
        workspace: path.join(root, "ws"),
        fixtureDir: LINKCHECK,
        model: "replay",
        trustReplayFile: false,
        backend: "container",
        orchestrator: "langgraph",
      });
      runIds.push(created.run_id);
      let view = await runs.settled(created.run_id);
      for (let i = 0; i < 2 && view.status === "awaiting_approval"; i++) {
        await runs.approve(created.run_id, view.pending_action!.action_id);
        view = await runs.settled(created.run_id);
      }
      expect(view.status, view.reason ?? "").toBe("completed");
      expect(view.counters.writes).toBe(2);
      // both decisions went through the graph's pause and resume (the path the tracing switches would have traced)
      expect(logs.filter((l) => l.msg === "langgraph drive").map((l) => l.start)).toEqual(["fresh", "resume", "resume"]);
    } finally {
      await runs.shutdown();
    }
    // a tracer sends in the background: give it the time it would take, then count
    await new Promise((r) => setTimeout(r, 2000));
    expect(seen).toEqual([]);
  });
});

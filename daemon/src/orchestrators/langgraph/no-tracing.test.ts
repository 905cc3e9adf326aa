import http from "node:http";
import type { AddressInfo } from "node:net";
import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noTracingCallbacks } from "./no-tracing.js";

const TRACING_ENV = ["LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"];

describe("no LangSmith request from a graph call, whatever the environment says", () => {
  const bodies: string[] = [];
  let server: http.Server;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = `${req.method} ${req.url} `;
      req.on("data", (d: Buffer) => (body += d.toString("latin1")));
      req.on("end", () => {
        bodies.push(body);
        res.setHeader("content-type", "application/json");
        res.end("{}");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const k of TRACING_ENV) saved[k] = process.env[k];
    Object.assign(process.env, {
      LANGSMITH_TRACING: "true",
      LANGCHAIN_TRACING_V2: "true",
      LANGSMITH_ENDPOINT: url,
      LANGCHAIN_ENDPOINT: url,
      LANGSMITH_API_KEY: "lsv2_pt_test",
      LANGCHAIN_API_KEY: "lsv2_pt_test",
    });
  });
  afterAll(async () => {
    for (const k of TRACING_ENV)
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    await new Promise((r) => server.close(r));
  });

  /** one step, then a pause (interrupt() needs the call's config from core's AsyncLocalStorage), then the resume value added */
  function graph() {
    const S = Annotation.Root({ n: Annotation<number> });
    return new StateGraph(S)
      .addNode("step", (s) => ({ n: s.n + 1 }))
      .addNode("pause", (s) => ({ n: s.n + interrupt<string, number>("how much?") }))
      .addEdge(START, "step")
      .addEdge("step", "pause")
      .addEdge("pause", END)
      .compile({ checkpointer: new MemorySaver() });
  }

  it("with the tracing variables set, a call with our callbacks sends nothing, while the same call without them does (the control)", async () => {
    const g = graph();
    const config = { configurable: { thread_id: "a" }, runName: "guarded-graph", callbacks: noTracingCallbacks() };
    await g.invoke({ n: 1 }, config);
    // the pause works under our handler (regression: given no run tree, interrupt() failed "outside the context of a graph")
    expect((await g.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["how much?"]);
    expect((await g.invoke(new Command({ resume: 40 }), config)).n).toBe(42);
    // the control: the same graph without our handler is traced to the (local, counting) endpoint
    await graph().invoke({ n: 1 }, { configurable: { thread_id: "b" }, runName: "control-graph" });
    for (let i = 0; i < 200 && !bodies.some((b) => b.includes("control-graph")); i++) await new Promise((r) => setTimeout(r, 50));
    expect(bodies.some((b) => b.includes("control-graph"))).toBe(true);
    // the tracer sends in order: once the control's runs arrived, a guarded run would have too
    expect(bodies.filter((b) => b.includes("guarded-graph"))).toEqual([]);
  });
});

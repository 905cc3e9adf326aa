import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The SDK turns tracing off by itself when NODE_ENV=test (as under vitest),
 * which would hide a missing switch; so each check runs in a fresh process
 * without NODE_ENV, once with the SDK alone (the control) and once loaded as
 * mini-agent loads it (./sdk.ts).
 */
const SDK = path.join(path.dirname(fileURLToPath(import.meta.url)), "sdk.ts");

function probe(loadOurs: boolean): { trace: string; span: string; model: string } {
  const script = `
    import { Agent, Runner, getGlobalTraceProvider } from "@openai/agents-core";
    ${loadOurs ? `await import(${JSON.stringify(SDK)});` : ""}
    const p = getGlobalTraceProvider();
    const trace = p.createTrace({ name: "probe" }).constructor.name;
    const span = p.createSpan({ data: { type: "custom", name: "probe", data: {} } }).constructor.name;
    let model = "resolved";
    try { await new Runner({ tracingDisabled: true }).run(new Agent({ name: "probe", model: "gpt-4.1-mini" }), "hi"); }
    catch (err) { model = String(err.message); }
    process.stdout.write(JSON.stringify({ trace, span, model }));
  `;
  const env = { ...process.env };
  delete env.NODE_ENV;
  delete env.OPENAI_AGENTS_DISABLE_TRACING;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env, encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { trace: string; span: string; model: string };
}

describe("the Agents SDK as mini-agent loads it (sdk.ts)", () => {
  it("has tracing off explicitly: only no-op traces and spans, so nothing reaches any processor or exporter (the SDK alone would trace)", () => {
    expect(probe(false).trace).toBe("Trace");
    expect(probe(true)).toMatchObject({ trace: "NoopTrace", span: "NoopSpan" });
  });

  it("registers no default model provider: a model asked for by name is refused, so no OpenAI client is ever made", () => {
    expect(probe(true).model).toMatch(/No default model provider/);
  });
});

describe("the daemon's process, with the Agents SDK loaded", () => {
  it("regression: the SDK's trace provider hooked SIGTERM with process.exit, so a SIGTERMed daemon exited before draining its sandbox pool; none of its process hooks stay", () => {
    const script = `
      const events = ["SIGTERM", "SIGINT", "beforeExit", "unhandledRejection"];
      const ours = () => {};
      process.on("SIGTERM", ours); // the daemon's own handler, there before any run asks for the SDK
      const count = () => Object.fromEntries(events.map((e) => [e, process.listeners(e).length]));
      const before = count();
      await import(${JSON.stringify(SDK)});
      const { getGlobalTraceProvider } = await import("@openai/agents-core");
      getGlobalTraceProvider();
      process.stdout.write(JSON.stringify({ before, after: count(), oursKept: process.listeners("SIGTERM").includes(ours) }));
    `;
    const env = { ...process.env };
    delete env.NODE_ENV;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env, encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0) throw new Error(`probe failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout) as { before: Record<string, number>; after: Record<string, number>; oursKept: boolean };
    expect(out.after).toEqual(out.before);
    expect(out.oursKept).toBe(true);
  });
});

import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalExecutor } from "./local-executor.js";

let ws: string;
beforeEach(async () => {
  ws = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-localws-"));
  await fs.writeFile(path.join(ws, "a.txt"), "original");
});
afterEach(async () => {
  await fs.rm(ws, { recursive: true, force: true });
});

const node = (code: string) => [process.execPath, "-e", code];
const base = { runId: "local-test", purpose: "candidate" as const, timeoutMs: 20_000 };

describe("LocalExecutor (trusted_local)", () => {
  it("runs on a copy: the host workspace is never changed", async () => {
    const ex = new LocalExecutor();
    const r = await ex.run({
      ...base,
      workspaceDir: ws,
      argv: node("require('fs').writeFileSync('a.txt','changed');console.log(require('fs').readFileSync('a.txt','utf8'))"),
    });
    expect(r.exit_code).toBe(0);
    expect(r.stdout.trim()).toBe("changed");
    expect(await fs.readFile(path.join(ws, "a.txt"), "utf8")).toBe("original");
    expect(r.runtime).toBe("host");
  });

  it("does not pass the daemon's environment (a canary in process.env stays out)", async () => {
    process.env.MINI_AGENT_LOCAL_CANARY = "secret-canary";
    try {
      const r = await new LocalExecutor().run({
        ...base,
        workspaceDir: ws,
        argv: node("console.log(JSON.stringify(Object.keys(process.env)))"),
        env: { CI: "1" },
      });
      const names = JSON.parse(r.stdout) as string[];
      expect(names).not.toContain("MINI_AGENT_LOCAL_CANARY");
      expect(names).toContain("CI");
    } finally {
      delete process.env.MINI_AGENT_LOCAL_CANARY;
    }
  });

  it("kills a SIGTERM-ignoring process at the deadline and reports timed_out", async () => {
    const r = await new LocalExecutor().run({ ...base, workspaceDir: ws, timeoutMs: 500, argv: node("process.on('SIGTERM',()=>{});setInterval(()=>{},1000)") });
    expect(r).toMatchObject({ timed_out: true, cancelled: false, exit_code: null });
  });

  it("cancel kills the process group and reports cancelled", async () => {
    const ctl = new AbortController();
    const p = new LocalExecutor().run({
      ...base,
      workspaceDir: ws,
      timeoutMs: 300,
      signal: ctl.signal,
      argv: node("process.on('SIGTERM',()=>{});setInterval(()=>{},1000)"),
    });
    setTimeout(() => ctl.abort(), 100);
    const r = await p;
    expect(r.cancelled).toBe(true);
  });

  it("drains endless output and marks it truncated (no deadlock on a full pipe)", async () => {
    const r = await new LocalExecutor().run({
      ...base,
      workspaceDir: ws,
      outputCapBytes: 2048,
      argv: node("const b='x'.repeat(65536);for(let i=0;i<200;i++)process.stdout.write(b)"),
    });
    expect(r.exit_code).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBe(2048);
  });

  it("reports a missing program as a failed run, not a crash", async () => {
    const r = await new LocalExecutor().run({ ...base, workspaceDir: ws, argv: ["/nonexistent/program"] });
    expect(r.exit_code).not.toBe(0);
    expect(r.stderr).toMatch(/ENOENT/);
  });

  it("rejects unknown options", () => {
    expect(() => new LocalExecutor({ timeout: 1 } as never)).toThrow(/unknown LocalExecutor option timeout/);
  });
});

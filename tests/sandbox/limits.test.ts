import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError, type MiniAgentError } from "../../daemon/src/errors.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import type { SandboxSession } from "../../daemon/src/sandbox/executor.js";
import { availableRuntimes, freshStateDir, leftoversWithPrefix, removeWithPrefix, runIdPrefix, workspace } from "./helpers.js";

/**
 * What a command ran into, as the sandbox reports it, and a warm sandbox
 * that keeps working after it (issue 10 items 8, 9, 10). Real engine, both
 * runtimes; no timing assertions.
 */
const FILES: Record<string, string> = {
  // a node:test file that starts node processes until the pids limit refuses them
  "bomb.test.mjs": `import { test } from "node:test";
import { spawn } from "node:child_process";
test("bomb", async () => {
  const codes = {};
  for (let i = 0; i < 400; i++) {
    try {
      const c = spawn(process.execPath, ["-e", "setInterval(()=>{},1e3)"], { stdio: "ignore" });
      c.on("error", (e) => { codes[e.code] = (codes[e.code] || 0) + 1; });
      c.unref();
    } catch (e) { codes[e.code] = (codes[e.code] || 0) + 1; }
  }
  await new Promise((r) => setTimeout(r, 3000));
  console.log(JSON.stringify(codes));
});`,
  "ok.test.mjs": `import { test } from "node:test"; test("ok", () => {});`,
  // the command's own process allocates until the kernel kills it
  "oom.mjs": `const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1));`,
  // leaves things in /tmp a later command must not see, some of them hard to remove
  "tmp-write.mjs": `import fs from "node:fs";
fs.writeFileSync("/tmp/marker", "from the previous command");
fs.mkdirSync("/tmp/locked/deeper", { recursive: true });
fs.writeFileSync("/tmp/locked/deeper/file", "x");
fs.chmodSync("/tmp/locked/deeper", 0);
fs.chmodSync("/tmp/locked", 0);
fs.writeFileSync("/tmp/.hidden", "x");
fs.chmodSync("/tmp/.hidden", 0);
console.log(JSON.stringify(fs.readdirSync("/tmp").sort()));`,
  "tmp-list.mjs": `import fs from "node:fs"; console.log(JSON.stringify(fs.readdirSync("/tmp").sort()));`,
};

const TAP = ["node", "--test", "--test-reporter=tap"];
let state: Awaited<ReturnType<typeof freshStateDir>>;
let ws: string;
const runtimes = await availableRuntimes();

beforeAll(async () => {
  state = await freshStateDir();
  ws = await workspace(FILES);
});
afterAll(async () => {
  await fs.rm(ws, { recursive: true, force: true });
  await fs.rm(state.stateDir, { recursive: true, force: true });
});

describe.each(runtimes)("limits and a warm sandbox that recovers on %s", (runtime) => {
  const prefix = runIdPrefix(`limits-${runtime}`);
  const executor = (config: Record<string, unknown> = {}) => new DockerExecutor({ lockPath: state.lockPath, config: { runtime, ...config } });
  const exec = (s: SandboxSession, argv: string[], timeoutMs = 120_000) => s.exec({ purpose: "candidate", argv, workspaceDir: ws, timeoutMs });
  const expectWorks = async (s: SandboxSession) => {
    const next = await exec(s, [...TAP, "ok.test.mjs"]);
    expect(next, next.stderr).toMatchObject({ exit_code: 0, limits: [], signal: null, sandbox_lost: false });
    expect(next.stdout).toMatch(/^# pass 1$/m);
  };

  afterAll(async () => {
    const left = await leftoversWithPrefix(prefix);
    await removeWithPrefix(prefix);
    expect(left).toEqual({ containers: [], volumes: [] });
  });

  it("regression (issue 10 item 8): a fork bomb in a candidate test is named, never an unexplained runner exit, and the next run in the same session works", async () => {
    const session = await executor().openSession(`${prefix}-bomb`);
    try {
      const r = await exec(session, [...TAP, "bomb.test.mjs"]).catch((e: unknown) => e as MiniAgentError);
      if (runtime === "runc") {
        // the kernel's own count: the pids cgroup refused forks while the command ran
        expect(isMiniAgentError(r), JSON.stringify(r)).toBe(false);
        expect((r as { limits: string[] }).limits).toContain("pids");
      } else {
        // gVisor's own threads share the pids cgroup: the bomb ends the sandbox's kernel, and the error says the sandbox stopped
        expect(isMiniAgentError(r, "sandbox_error"), JSON.stringify(r)).toBe(true);
        expect((r as MiniAgentError).details).toMatchObject({ sandbox_exit_status: expect.any(Number) });
      }
      await expectWorks(session);
    } finally {
      await session.close();
    }
  });

  it("a fresh sandbox reports the same fork bomb: the pids limit on runc, the sandbox's loss on runsc", async () => {
    const r = await executor().run({ runId: `${prefix}-fresh`, purpose: "verifier", argv: [...TAP, "bomb.test.mjs"], workspaceDir: ws, timeoutMs: 120_000 });
    if (runtime === "runc") expect(r.limits).toContain("pids");
    else expect(r).toMatchObject({ sandbox_lost: true, exit_code: null });
  });

  it("regression (exit 137, no OOM recorded): a command the kernel OOM-kills is reported with the memory limit, and the next run works", async () => {
    const session = await executor({ memoryBytes: 256 << 20 }).openSession(`${prefix}-oom`);
    try {
      const r = await exec(session, ["node", "oom.mjs"]);
      expect(r).toMatchObject({ oom_killed: true, timed_out: false, exit_code: runtime === "runc" ? 137 : null });
      expect(r.limits).toContain("memory");
      // runc: the command's own process got the kernel's SIGKILL; runsc: the whole sandbox went with it
      if (runtime === "runc") expect(r).toMatchObject({ signal: "SIGKILL", sandbox_lost: false });
      else expect(r).toMatchObject({ signal: null, sandbox_lost: true });
      await expectWorks(session);
    } finally {
      await session.close();
    }
  });

  it("regression (issue 10 item 9): a command that kills the spawner and keeps running is a sandbox_error, not a timeout, and the session goes on", async () => {
    const session = await executor().openSession(`${prefix}-kill`);
    try {
      // a deadline well below the 60 s default, so that reaching it would show
      const killer = "process.kill(process.ppid,'SIGKILL');setInterval(()=>{},1000)";
      const err = await exec(session, ["node", "-e", killer], 30_000).then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(isMiniAgentError(err, "sandbox_error"), JSON.stringify(err)).toBe(true);
      await expectWorks(session);
    } finally {
      await session.close();
    }
  });

  it("regression (issue 10 item 10): every command in a warm sandbox starts with an empty /tmp, even after one left unreadable files there", async () => {
    const session = await executor().openSession(`${prefix}-tmp`);
    try {
      const wrote = await exec(session, ["node", "tmp-write.mjs"]);
      expect(wrote.exit_code, wrote.stderr).toBe(0);
      expect(JSON.parse(wrote.stdout)).toEqual(expect.arrayContaining([".hidden", "locked", "marker"]));
      const box = (await leftoversWithPrefix(`${prefix}-tmp`)).containers;
      for (let i = 0; i < 2; i++) {
        const seen = await exec(session, ["node", "tmp-list.mjs"]);
        expect(seen.exit_code, seen.stderr).toBe(0);
        expect(JSON.parse(seen.stdout)).toEqual([]);
      }
      // emptied in place: the same warm container, not a replacement
      expect((await leftoversWithPrefix(`${prefix}-tmp`)).containers).toEqual(box);
    } finally {
      await session.close();
    }
  });
});

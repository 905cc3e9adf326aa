import fs from "node:fs/promises";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { hostProcessesOf } from "../../probes/host-probes.js";
import {
  availableRuntimes,
  freshStateDir,
  leftoversWithPrefix,
  ONLY_SANDBOX_PROCESSES,
  PROCESS_LIST,
  removeWithPrefix,
  runIdPrefix,
  workspace,
} from "./helpers.js";

/**
 * Candidate test files that try to break out or break the host, run through
 * the executor exactly as the agent's tests are. Each must be contained,
 * reported with the right flags, and leave nothing behind.
 */
const CANDIDATES: Record<string, string> = {
  "forkbomb.mjs": `import { spawn } from "node:child_process";
let n = 0, errs = 0;
setInterval(() => {
  const c = spawn(process.execPath, ["-e", "setInterval(()=>{},1e3)"], { stdio: "ignore" });
  c.on("spawn", () => n++);
  c.on("error", (e) => { if (++errs >= 3) { console.log(JSON.stringify({ n, code: e.code })); process.exit(0); } });
}, 5);`,
  "endless.mjs": `const b = "x".repeat(65536); const w = () => process.stdout.write(b, w); w();`,
  "stubborn.mjs": `process.on("SIGTERM", () => {}); setInterval(() => {}, 1000);`,
  "grandchild.mjs": `import { spawn } from "node:child_process";
const c = spawn(process.execPath, ["-e", "process.on('SIGTERM',()=>{});setInterval(()=>{},1000)"], { detached: true, stdio: "ignore" });
c.unref(); console.log("spawned", c.pid);`,
  "connect.mjs": `import net from "node:net";
const s = net.connect({ host: "192.0.2.1", port: 80, timeout: 3000 });
s.on("connect", () => { console.log("connected"); s.destroy(); });
s.on("timeout", () => { console.log("ETIMEDOUT"); s.destroy(); });
s.on("error", (e) => console.log(e.code));`,
  "dns.mjs": `import dns from "node:dns";
const r = new dns.Resolver({ timeout: 2000, tries: 1 });
r.resolve4("example.com", (err, a) => console.log(err ? err.code : "resolved " + a));`,
  "write-root.mjs": `import fs from "node:fs";
for (const p of ["/evil", "/etc/passwd", "/usr/bin/node"]) { try { fs.writeFileSync(p, "x"); console.log("WROTE", p); } catch (e) { console.log(p, e.code); } }`,
  "symlink.mjs": `import fs from "node:fs";
const out = {};
try { fs.symlinkSync("/etc", "/workspace/etc-link"); fs.writeFileSync("/workspace/etc-link/evil", "x"); out.viaNewLink = "WROTE"; } catch (e) { out.viaNewLink = e.code; }
try { out.hostLink = fs.readFileSync("/workspace/host-secret-link", "utf8"); } catch (e) { out.hostLink = e.code; }
try { fs.writeFileSync("/workspace/host-secret-link", "overwritten"); out.hostLinkWrite = "WROTE"; } catch (e) { out.hostLinkWrite = e.code; }
console.log(JSON.stringify(out));`,
  "hardlink.mjs": `import fs from "node:fs";
const out = {};
for (const src of ["/etc/passwd", "/usr/bin/node", "/opt/mini-agent/probe"]) { try { fs.linkSync(src, "/workspace/hl-" + src.split("/").pop()); out[src] = "LINKED"; } catch (e) { out[src] = e.code; } }
console.log(JSON.stringify(out));`,
  "environ.mjs": `import fs from "node:fs";
let e; try { e = fs.readFileSync("/proc/1/environ", "utf8").split("\\0").filter(Boolean); } catch (err) { e = err.code; }
console.log(JSON.stringify({ pid1: e, own: Object.keys(process.env) }));`,
  "fill.mjs": `import fs from "node:fs";
const dir = process.argv[2]; const chunk = Buffer.alloc(1 << 20, 1); let n = 0;
try { for (;;) { fs.writeFileSync(dir + "/fill-" + n, chunk); n++; } } catch (e) { console.log(JSON.stringify({ code: e.code, mib: n })); }`,
  "oom.mjs": `const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1));`,
};

const OUTSIDE = "/tmp/mini-agent-adversarial-host-secret.txt";
const CAP = 64 * 1024;
let state: Awaited<ReturnType<typeof freshStateDir>>;
let ws: string;
const runtimes = await availableRuntimes();

beforeAll(async () => {
  state = await freshStateDir();
  ws = await workspace(CANDIDATES);
  await fs.writeFile(OUTSIDE, "host secret");
  await fs.symlink(OUTSIDE, path.join(ws, "host-secret-link"));
});
afterAll(async () => {
  await fs.rm(ws, { recursive: true, force: true });
  await fs.rm(state.stateDir, { recursive: true, force: true });
  await fs.rm(OUTSIDE, { force: true });
});

describe.each(runtimes)("adversarial candidates on %s", (runtime) => {
  const prefix = runIdPrefix(`adv-${runtime}`);
  const ex = () =>
    new DockerExecutor({
      lockPath: state.lockPath,
      // under runsc the pids cgroup also counts the gVisor kernel's own threads: a tight limit kills the sandbox itself
      config: { runtime, pidsLimit: runtime === "runc" ? 64 : 256, tmpfsBytes: 8 << 20, workspaceBytes: 8 << 20, memoryBytes: 256 << 20, outputCapBytes: CAP },
    });
  const ids: string[] = [];
  const run = (name: string, argv: string[], timeoutMs = 60_000, signal?: AbortSignal) =>
    ex().runFresh(
      { runId: `${prefix}-${name.replace(/\W/g, "")}`, purpose: "candidate", argv, workspaceDir: ws, timeoutMs, signal },
      { onStarted: async (b) => void ids.push(b.id) },
    );

  afterAll(async () => {
    const left = await leftoversWithPrefix(prefix);
    await removeWithPrefix(prefix);
    // nothing of any run in this suite remains: no container, no volume, no host process
    expect(left).toEqual({ containers: [], volumes: [] });
    expect(hostProcessesOf(ids)).toEqual([]);
  });

  it("fork bomb is contained and the host can still start processes", async () => {
    const r = await run("forkbomb", ["node", "forkbomb.mjs"], 60_000);
    if (runtime === "runc") {
      // either spawn reports EAGAIN or node itself cannot make a thread: both are the pids limit
      expect(r.stdout.includes("EAGAIN") || (r.exit_code !== 0 && !r.timed_out)).toBe(true);
    }
    expect(spawnSync(process.execPath, ["-e", "0"]).status).toBe(0);
  });

  it("endless output is drained, capped and flagged truncated; the deadline still applies", async () => {
    const r = await run("endless", ["node", "endless.mjs"], 3_000);
    expect(r.timed_out).toBe(true);
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBe(CAP);
  });

  it("a SIGTERM-ignoring test is gone at the deadline", async () => {
    const r = await run("stubborn", ["node", "stubborn.mjs"], 1_500);
    expect(r).toMatchObject({ timed_out: true, cancelled: false, exit_code: null });
  });

  it("cancel kills the sandbox and reports cancelled", async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 1_000);
    const r = await run("cancel", ["node", "stubborn.mjs"], 60_000, ctl.signal);
    expect(r).toMatchObject({ cancelled: true, timed_out: false, exit_code: null });
  });

  it("a detached grandchild does not survive the run", async () => {
    const r = await run("grandchild", ["node", "grandchild.mjs"]);
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toMatch(/spawned \d+/);
  });

  it("outbound TCP is refused without sending anything", async () => {
    const r = await run("connect", ["node", "connect.mjs"]);
    expect(r.stdout.trim()).toMatch(/^(ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)$/);
  });

  it("DNS fails", async () => {
    const r = await run("dns", ["node", "dns.mjs"]);
    expect(r.stdout).not.toMatch(/resolved/);
    expect(r.stdout.trim()).toMatch(/^E[A-Z]+$/);
  });

  it("writes to / and the image fail", async () => {
    const r = await run("writeroot", ["node", "write-root.mjs"]);
    expect(r.stdout).not.toContain("WROTE");
    expect(r.stdout.trim().split("\n")).toHaveLength(3);
  });

  it("symlinks cannot reach outside the workspace (in either direction)", async () => {
    const r = await run("symlink", ["node", "symlink.mjs"]);
    const o = JSON.parse(r.stdout);
    expect(o.viaNewLink).not.toBe("WROTE");
    // a host-side link that resolves outside never enters the sandbox (workspace/export-links.ts): nothing is there to follow
    expect(o.hostLink).toBe("ENOENT");
    expect(await fs.readFile(OUTSIDE, "utf8")).toBe("host secret");
  });

  it("hardlinks to files outside the workspace are refused", async () => {
    const o = JSON.parse((await run("hardlink", ["node", "hardlink.mjs"])).stdout);
    expect(Object.values(o).every((v) => v !== "LINKED")).toBe(true);
  });

  it("/proc/1/environ holds no host secret", async () => {
    process.env.MINI_AGENT_ADVERSARIAL_CANARY = "canary-5f1e0c";
    try {
      const r = await run("environ", ["node", "environ.mjs"]);
      expect(r.stdout).not.toContain("canary-5f1e0c");
      expect(r.stdout).not.toContain("MINI_AGENT_ADVERSARIAL_CANARY");
    } finally {
      delete process.env.MINI_AGENT_ADVERSARIAL_CANARY;
    }
  });

  it("filling /tmp stops at its size cap", async () => {
    const o = JSON.parse((await run("filltmp", ["node", "fill.mjs", "/tmp"])).stdout);
    expect(o.code).toBe("ENOSPC");
    expect(o.mib).toBeLessThanOrEqual(8);
  });

  it("filling the workspace stops at its size cap (no host disk used)", async () => {
    const o = JSON.parse((await run("fillws", ["node", "fill.mjs", "/workspace"])).stdout);
    expect(o.code).toBe("ENOSPC");
    expect(o.mib).toBeLessThanOrEqual(8);
  });

  it("running out of memory is reported as oom_killed, not a hang", async () => {
    const r = await run("oom", ["node", "oom.mjs"], 60_000);
    expect(r.oom_killed).toBe(true);
    expect(r.timed_out).toBe(false);
  });
});

describe.each(runtimes)("warm session under attack on %s", (runtime) => {
  const prefix = runIdPrefix(`warm-${runtime}`);
  afterAll(async () => {
    const left = await leftoversWithPrefix(prefix);
    await removeWithPrefix(prefix);
    expect(left).toEqual({ containers: [], volumes: [] });
  });

  it("a stubborn exec is killed at its deadline, and the session keeps working with nothing left over", async () => {
    const ex = new DockerExecutor({ lockPath: state.lockPath, config: { runtime } });
    const session = await ex.openSession(`${prefix}-s`);
    try {
      const stuck = await session.exec({ purpose: "candidate", argv: ["node", "stubborn.mjs"], workspaceDir: ws, timeoutMs: 1_500 });
      expect(stuck).toMatchObject({ timed_out: true, exit_code: null });
      await session.exec({ purpose: "candidate", argv: ["node", "grandchild.mjs"], workspaceDir: ws, timeoutMs: 60_000 });
      const count = PROCESS_LIST;
      const after = await session.exec({ purpose: "candidate", argv: ["node", "-e", count], workspaceDir: ws, timeoutMs: 60_000 });
      expect(after.exit_code).toBe(0);
      // init, spawner and this process only
      expect(JSON.parse(after.stdout)).toEqual(ONLY_SANDBOX_PROCESSES);
    } finally {
      await session.close();
    }
  });

  // Regression: under gVisor (--oci-seccomp) a `docker exec`'d process ran with Seccomp 0; every
  // command must be a child of the spawner, inside the filtered init tree, fresh and warm alike.
  it("every command runs as a child of the spawner with the seccomp filter, in a fresh run and in a warm session", async () => {
    const ex = new DockerExecutor({ lockPath: state.lockPath, config: { runtime } });
    const where =
      "const fs=require('fs');const st=fs.readFileSync('/proc/self/status','utf8');" +
      "console.log(JSON.stringify({seccomp:st.match(/^Seccomp:\\s*(\\d)/m)?.[1],nnp:st.match(/^NoNewPrivs:\\s*(\\d)/m)?.[1]??null," +
      "parent:fs.readFileSync('/proc/'+process.ppid+'/cmdline','utf8').split('\\0')[0]}))";
    const fresh = await ex.runFresh({ runId: `${prefix}-where`, purpose: "candidate", argv: ["node", "-e", where], workspaceDir: ws, timeoutMs: 60_000 });
    expect(fresh.exit_code, fresh.stderr).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ seccomp: "2", parent: "/opt/mini-agent/spawner" });
    const session = await ex.openSession(`${prefix}-where`);
    try {
      const warm = await session.exec({ purpose: "candidate", argv: ["node", "-e", where], workspaceDir: ws, timeoutMs: 60_000 });
      expect(warm.exit_code, warm.stderr).toBe(0);
      expect(JSON.parse(warm.stdout)).toMatchObject({ seccomp: "2", parent: "/opt/mini-agent/spawner" });
    } finally {
      await session.close();
    }
  });

  it("a command that kills the spawner gets a sandbox_error (not a test failure) and the session's next exec gets a new sandbox", async () => {
    const ex = new DockerExecutor({ lockPath: state.lockPath, config: { runtime } });
    const session = await ex.openSession(`${prefix}-lost`);
    try {
      const err = await session
        .exec({
          purpose: "candidate",
          argv: ["node", "-e", "process.kill(process.ppid,'SIGKILL');setTimeout(()=>{},5000)"],
          workspaceDir: ws,
          timeoutMs: 60_000,
        })
        .then(
          (r) => r,
          (e: unknown) => e,
        );
      expect(isMiniAgentError(err, "sandbox_error"), JSON.stringify(err)).toBe(true);
      const next = await session.exec({ purpose: "candidate", argv: ["node", "-e", "console.log('ok')"], workspaceDir: ws, timeoutMs: 60_000 });
      expect(next).toMatchObject({ exit_code: 0 });
      expect(next.stdout.trim()).toBe("ok");
    } finally {
      await session.close();
    }
  });

  it("an OOM in one exec is reported and the next exec gets a clean sandbox", async () => {
    const ex = new DockerExecutor({ lockPath: state.lockPath, config: { runtime, memoryBytes: 256 << 20 } });
    const session = await ex.openSession(`${prefix}-oom`);
    try {
      const oom = await session.exec({ purpose: "candidate", argv: ["node", "oom.mjs"], workspaceDir: ws, timeoutMs: 60_000 });
      expect(oom.oom_killed).toBe(true);
      const next = await session.exec({ purpose: "candidate", argv: ["node", "-e", "console.log('ok')"], workspaceDir: ws, timeoutMs: 60_000 });
      expect(next).toMatchObject({ exit_code: 0, oom_killed: false });
      expect(next.stdout.trim()).toBe("ok");
    } finally {
      await session.close();
    }
  });
});

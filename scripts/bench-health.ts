import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";

/**
 * `npm run bench:health [-- --files N] [--kib K] [--requests R]`
 * Issue 10 item 5: creating a run copies the task's control folder into the
 * state dir. This starts a real daemon (from source, temp state dir), posts a
 * create-run whose control folder holds N files of K KiB (default about 60 MB),
 * and at the same time sends R GET /v1/health requests one after another over
 * the socket. Prints the median and max health latency, how many requests were
 * sent while the create was still in progress, and the create's own time; and,
 * for comparison on a loaded machine, the same R requests with no create going
 * on (/health asks the Docker engine, so it is never instant), and R more once
 * the create is done, with the state dir holding the run's copy (health counts
 * the state dir's size: a kept figure, not a walk per request).
 * Never a timed test: the figures depend on the machine and its load.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LINKCHECK = path.join(REPO, "fixtures", "linkcheck");

function parseArgs(argv: string[]) {
  const o = { files: 3000, kib: 20, requests: 50 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const n = () => Number(argv[++i]);
    if (a === "--files") o.files = n();
    else if (a === "--kib") o.kib = n();
    else if (a === "--requests") o.requests = n();
    else throw new Error(`unknown option ${a}; use --files N, --kib K, --requests R`);
  }
  for (const k of ["files", "kib", "requests"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  return o;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Files and MiB under `dir`, for the record of what /health had to count. */
function treeFigures(dir: string): string {
  let files = 0;
  let bytes = 0;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    files++;
    bytes += fs.lstatSync(path.join(e.parentPath, e.name)).size;
  }
  return `${files} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The linkcheck control folder plus `bulk/`: files spread over folders, random bytes. */
function makeControl(root: string, files: number, kib: number): string {
  const control = path.join(root, "control");
  fs.cpSync(path.join(LINKCHECK, "control"), control, { recursive: true });
  for (let i = 0; i < files; i++) {
    const dir = path.join(control, "bulk", `d${i % 40}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.bin`), crypto.randomBytes(kib * 1024));
  }
  return control;
}

async function startDaemon(stateDir: string): Promise<{ socket: string; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, ["--import", "tsx", path.join(REPO, "daemon/src/cli.ts"), "--state-dir", stateDir], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const m = /mini-agent-daemon ready pid=\d+ socket=(\S+)/.exec(out);
    if (m) {
      return {
        socket: m[1]!,
        async stop() {
          proc.kill("SIGTERM");
          await exited;
        },
      };
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`the daemon did not start:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-health-"));
  try {
    const control = makeControl(root, o.files, o.kib);
    const workspace = path.join(root, "workspace");
    fs.cpSync(path.join(LINKCHECK, "repo"), workspace, { recursive: true });
    const daemon = await startDaemon(path.join(root, "state"));
    const agent = new Agent({ connect: { socketPath: daemon.socket }, connections: 4 });
    try {
      const call = async (method: "GET" | "POST", url: string, body?: unknown) => {
        const res = await request(`http://localhost${url}`, {
          method,
          dispatcher: agent,
          headers: { "content-type": "application/json" },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
        return { status: res.statusCode, text: await res.body.text() };
      };
      const healthTimes = async (n: number) => {
        const samples: Array<{ start: number; ms: number }> = [];
        for (let i = 0; i < n; i++) {
          const start = performance.now();
          const r = await call("GET", "/v1/health");
          if (r.status !== 200) throw new Error(`health answered ${r.status}: ${r.text}`);
          samples.push({ start, ms: performance.now() - start });
        }
        return samples;
      };
      const figures = (ms: number[]) => ({ requests: ms.length, median_ms: +median(ms).toFixed(1), max_ms: +Math.max(...ms).toFixed(1) });
      await call("GET", "/v1/health"); // warm: the first health asks the engine for everything once
      const idle = await healthTimes(o.requests);
      const task = JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8"));
      const t0 = performance.now();
      let createdAt = Number.POSITIVE_INFINITY;
      // host backend with a trusted replay: the figures are about the create, not about Docker
      const create = call("POST", "/v1/runs", {
        workspace,
        task_spec: task,
        control_dir: control,
        replay_path: path.join(LINKCHECK, "replay.json"),
        trust_replay_file: true,
        backend: "trusted_local",
      }).then((r) => {
        createdAt = performance.now();
        return r;
      });
      const samples = await healthTimes(o.requests);
      const created = await create;
      // the state dir now holds the run's copy of the control folder: what every later /health answered with a walk of it
      const after = await healthTimes(o.requests);
      const result = {
        control_folder: `${o.files} files of ${o.kib} KiB (+ linkcheck control/), ${((o.files * o.kib) / 1024).toFixed(1)} MiB`,
        create: { status: created.status, ms: Math.round(createdAt - t0), ...(created.status >= 300 ? { body: JSON.parse(created.text) } : {}) },
        health_while_creating: { ...figures(samples.map((s) => s.ms)), sent_while_creating: samples.filter((s) => s.start < createdAt).length },
        health_idle: figures(idle.map((s) => s.ms)),
        health_after_create: { ...figures(after.map((s) => s.ms)), state_dir: treeFigures(path.join(root, "state")) },
        load_average: os.loadavg().map((l) => +l.toFixed(2)),
      };
      process.stdout.write(JSON.stringify(result, null, 2) + "\n");
      return 0;
    } finally {
      await agent.close();
      await daemon.stop();
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`bench failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);

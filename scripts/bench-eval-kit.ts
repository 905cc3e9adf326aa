import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import type { ImageFamily } from "../sandbox-image/definitions.js";
import { pinFamilyImage } from "../sandbox-image/pin-image.js";

/** What bench-eval.ts and bench-eval-cpu.ts share: the bins, a daemon of their own, the suite. */
export const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
export const FIXTURES: Array<{ name: string; family: ImageFamily }> = [
  { name: "linkcheck", family: "node" },
  { name: "semverlite", family: "python" },
  { name: "wordwrap", family: "go" },
];

export const built = fs.existsSync(path.join(REPO, "dist/daemon/src/cli.js")) && fs.existsSync(path.join(REPO, "dist/client/src/cli.js"));

/** The folders `npm run build` compiles into the daemon's and the client's bins. */
const BIN_SOURCES = ["daemon/src", "client/src", "client-lib", "eval/src", "probes", "sandbox-image"];

/**
 * Refuses to measure bins older than their sources: a bench over a stale dist/
 * measures code that is no longer there (and says "bins from dist/" while
 * doing it). The error names the newest source file and the way out.
 */
export function requireFreshBins(): void {
  if (!built) return;
  const binTime = Math.min(...["daemon", "client"].map((w) => fs.statSync(path.join(REPO, `dist/${w}/src/cli.js`)).mtimeMs));
  let newest = { file: "", mtime: 0 };
  for (const dir of BIN_SOURCES) {
    for (const rel of fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[]) {
      if (!rel.endsWith(".ts") || rel.endsWith(".test.ts")) continue;
      const mtime = fs.statSync(path.join(REPO, dir, rel)).mtimeMs;
      if (mtime > newest.mtime) newest = { file: path.join(dir, rel), mtime };
    }
  }
  if (newest.mtime > binTime)
    throw new Error(`dist/ is older than ${newest.file}: run \`npm run build\` first (or remove dist/ to measure the sources through tsx)`);
}
export const bin = (which: "daemon" | "client") =>
  built ? [path.join(REPO, `dist/${which}/src/cli.js`)] : ["--import", "tsx", path.join(REPO, `${which}/src/cli.ts`)];
const ENV = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/root",
  NO_COLOR: "1",
  ...(process.env.DOCKER_HOST && { DOCKER_HOST: process.env.DOCKER_HOST }),
};

/** Runs node with args; `onSpawn` is told the child's pid (the CPU bench samples it). */
export function run(args: string[], onSpawn?: (pid: number) => void): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: REPO, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    if (p.pid !== undefined) onSpawn?.(p.pid);
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** The daemon on its own state dir; `nodeFlags` go before the bin (e.g. --cpu-prof). */
export async function startDaemon(stateDir: string, opts: { nodeFlags?: string[]; daemonArgs?: string[] } = {}) {
  const args = [...(opts.nodeFlags ?? []), ...bin("daemon"), "--state-dir", stateDir, ...(opts.daemonArgs ?? [])];
  const p = spawn(process.execPath, args, { cwd: REPO, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  p.stdout.on("data", (d: Buffer) => (out += d.toString()));
  p.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const m = /mini-agent-daemon ready pid=(\d+) socket=(\S+)/.exec(out);
    if (m) {
      const stop = () => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : (p.once("exit", () => r()), p.kill("SIGTERM"))));
      return { pid: Number(m[1]), socket: m[2]!, stop };
    }
    if (p.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Pins every family's image into the bench's own state dir (built when the engine lacks it). */
export async function pinImages(docker: Docker, stateDir: string, imageLock: string | null): Promise<void> {
  const sourceLock = imageLock ?? statePath(resolveStateDir(process.env), "imageLock");
  for (const { family } of FIXTURES)
    await pinFamilyImage(docker, statePath(stateDir, "imageLock"), family, sourceLock, (f) => process.stderr.write(`building the ${f} image...\n`));
}

/** VmRSS / VmHWM of a process in kB, from /proc (Linux); null when unreadable. */
export function procKb(pid: number, field: "VmRSS" | "VmHWM"): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** One case per built-in fixture: its canonical replay, expected completed. */
export function fixtureSuite(root: string): string {
  const suite = path.join(root, "fixture-suite");
  for (const f of FIXTURES) {
    const dir = path.join(suite, `${f.name}-canonical`);
    fs.mkdirSync(dir, { recursive: true });
    for (const part of ["repo", "task.json", "control", "replay.json"]) {
      const src = path.join(REPO, "fixtures", f.name, part);
      if (fs.existsSync(src)) fs.cpSync(src, path.join(dir, part), { recursive: true });
    }
    fs.writeFileSync(path.join(dir, "expect.json"), JSON.stringify({ schema_version: 1, status: "completed" }));
  }
  return suite;
}

/** --suite, else `evals/` when it exists, else the fixture suite in `root`. */
export function suiteDir(suite: string | null, root: string): string {
  return suite ?? (fs.existsSync(path.join(REPO, "evals")) ? path.join(REPO, "evals") : fixtureSuite(root));
}

/** USER_HZ: /proc/stat and /proc/PID/stat count clock ticks of 1/100 s on Linux */
export const TICK = 100;

/** the machine's busy and total CPU seconds since boot (all cores), from /proc/stat */
export function machineCpu(): { busy: number; total: number } {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = line.reduce((a, b) => a + b, 0) / TICK;
  const idle = ((line[3] ?? 0) + (line[4] ?? 0)) / TICK;
  return { busy: total - idle, total };
}

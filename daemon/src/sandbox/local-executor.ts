import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { buildExecEnv, resolveSandboxConfig, type SandboxConfig } from "./config.js";
import type { Executor, SandboxSession } from "./executor.js";
import { CappedOutput } from "./output.js";
import { listExport, openExported, type ExportEntry } from "../workspace/index.js";
import { notifyIncluded } from "./workspace-tar.js";
import { refuseChangedList } from "./changed-list.js";

/** Copies exported entries under dest, each file through the same no-follow, re-checked open as the tar. */
async function copyExport(entries: readonly ExportEntry[], dest: string): Promise<void> {
  await fs.mkdir(dest);
  for (const e of entries) {
    const to = path.join(dest, ...e.rel.split("/"));
    if (e.type === "dir") {
      await fs.mkdir(to);
      continue;
    }
    if (e.type === "symlink") {
      await fs.symlink(e.target!, to);
      continue;
    }
    const { fh } = await openExported(e);
    try {
      await fs.writeFile(to, fh.createReadStream({ autoClose: false }), { mode: (Number(e.stat.mode) & 0o755) | 0o600 });
    } finally {
      await fh.close();
    }
  }
}

export interface LocalExecutorOptions {
  config?: unknown;
  /** where per-run copies are made; default the OS temp dir. */
  tmpRoot?: string;
  now?: () => number;
}

/**
 * `trusted_local`: host processes, for the built-in replays only (never a live
 * model: nothing here isolates anything). Same contract as the container:
 * a copy of the workspace (the original is never touched), a clean
 * allowlisted environment (never the daemon's), timeout and cancel that kill
 * the whole process group, capped output. Argv elements under /workspace and
 * /control are mapped to the copies so the same task spec works.
 */
export class LocalExecutor implements Executor {
  readonly kind = "trusted_local" as const;
  readonly config: SandboxConfig;
  private readonly tmpRoot: string;
  private readonly now: () => number;

  constructor(opts: LocalExecutorOptions = {}) {
    const known = new Set(["config", "tmpRoot", "now"]);
    for (const k of Object.keys(opts)) {
      if (!known.has(k)) throw new MiniAgentError("invalid_fields", `unknown LocalExecutor option ${k}; known: ${[...known].join(", ")}`);
    }
    this.config = resolveSandboxConfig(opts.config ?? {});
    this.tmpRoot = opts.tmpRoot ?? os.tmpdir();
    this.now = opts.now ?? (() => performance.now());
  }

  async describe() {
    return { runtime: "host" as const, imageDigest: null, engineVersion: null };
  }

  /** Host processes need no engine and no image. */
  async preflight(): Promise<void> {}

  async openSession(runId: string): Promise<SandboxSession> {
    let closed = false;
    return {
      exec: (req) => {
        if (closed) return Promise.reject(new MiniAgentError("sandbox_error", "the session is closed"));
        return this.run({ ...req, runId });
      },
      close: async () => {
        closed = true;
      },
    };
  }

  async run(req: SandboxRunRequest): Promise<SandboxResult> {
    if (req.reportFile !== undefined) {
      // host processes share the host's /tmp: a report there could be anyone's, and reading it is reading the host
      throw new MiniAgentError(
        "report_file_unsupported",
        `the trusted_local backend runs tests as host processes and cannot read a report file (${req.reportFile.path}); use the container backend for a junit_xml preset`,
      );
    }
    refuseChangedList(req, "trusted_local");
    const envList = buildExecEnv(this.config, req.env);
    const t0 = this.now();
    const root = await fs.mkdtemp(path.join(this.tmpRoot, "mini-agent-local-"));
    try {
      const ws = path.join(root, "workspace");
      const ctl = path.join(root, "control");
      const home = path.join(root, "home");
      // the same export rule as the container backend, so a test sees the same files on both
      const exported = await listExport(req.workspaceDir, req.exportSpec);
      await copyExport(exported.entries, ws);
      notifyIncluded(req, exported.entries);
      if (req.controlDir !== undefined) await fs.cp(req.controlDir, ctl, { recursive: true, verbatimSymlinks: true });
      await fs.mkdir(home);
      const env: Record<string, string> = Object.fromEntries(envList.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
      env.HOME = home;
      env.TMPDIR = home;
      const argv = req.argv.map((a) => a.replace(/^\/workspace(?=\/|$)/, ws).replace(/^\/control(?=\/|$)/, ctl));
      const outcome = await this.spawnCapped(argv, ws, env, req);
      return {
        ...outcome,
        ...(exported.linksLeftOut && { links_left_out: exported.linksLeftOut }),
        oom_killed: false,
        // host processes: only the limits the host itself enforces are known
        limits: [...(outcome.timed_out ? ["time" as const] : []), ...(outcome.truncated ? ["output" as const] : [])],
        sandbox_lost: false,
        duration_ms: Math.round(this.now() - t0),
        image_digest: null,
        runtime: "host",
      };
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  }

  private spawnCapped(
    argv: string[],
    cwd: string,
    env: Record<string, string>,
    req: SandboxRunRequest,
  ): Promise<Pick<SandboxResult, "exit_code" | "timed_out" | "cancelled" | "truncated" | "signal" | "stdout" | "stderr">> {
    const out = new CappedOutput(req.outputCapBytes ?? this.config.outputCapBytes);
    let timedOut = false;
    let cancelled = false;
    return new Promise((resolve) => {
      if (req.signal?.aborted) {
        resolve({ exit_code: null, timed_out: false, cancelled: true, truncated: false, signal: null, stdout: "", stderr: "" });
        return;
      }
      // own process group, so a kill reaches the children the test started too
      const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, req.timeoutMs);
      const onAbort = () => {
        cancelled = true;
        killGroup();
      };
      req.signal?.addEventListener("abort", onAbort, { once: true });
      child.stdout.on("data", (c: Buffer) => out.push("stdout", c));
      child.stderr.on("data", (c: Buffer) => out.push("stderr", c));
      let exitCode: number | null = null;
      let signal: string | null = null;
      child.on("exit", (code, sig) => {
        exitCode = code;
        signal = sig;
        // leftover processes of the group die with the test
        killGroup();
      });
      const finish = () => {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
        resolve({
          exit_code: timedOut || cancelled ? null : exitCode,
          timed_out: timedOut,
          cancelled,
          truncated: out.truncated,
          signal: timedOut || cancelled ? null : signal,
          stdout: out.text("stdout"),
          stderr: out.text("stderr"),
        });
      };
      child.on("close", finish);
      child.on("error", (err) => {
        out.push("stderr", Buffer.from(`cannot start ${argv[0]}: ${(err as NodeJS.ErrnoException).code ?? err.message}\n`));
        exitCode = 127;
      });
    });
  }
}

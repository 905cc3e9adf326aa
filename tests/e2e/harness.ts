import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { binArgs } from "../../scripts/bins.js";
import { noteTestInstance } from "../../scripts/test-instances.js";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { forceRemove } from "../../daemon/src/sandbox/force-remove.js";
import { INSTANCE_LABEL, LAYER_LABEL, labelFilter, OWNER_FILTER, POOL_PURPOSE, PURPOSE_LABEL } from "../../daemon/src/sandbox/labels.js";

/**
 * Real processes for the end-to-end tests: the daemon and the client are
 * spawned exactly as a user starts them (the built bins under the test command,
 * else from source through tsx: see binArgs), each with its own environment.
 */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The node arguments that start a bin (scripts/bins.ts): the built file under the test
 * command (MINI_AGENT_TEST_BINS=dist), otherwise the source through tsx, so a test needs
 * no build step.
 */
export { binArgs } from "../../scripts/bins.js";

/** an environment without the caller's credentials or state settings, so tests never touch a real setup */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ["PATH", "HOME", "LANG", "TZ", "DOCKER_HOST", "TMPDIR"]) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, NO_COLOR: "1", ...extra };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface DaemonHandle {
  proc: ChildProcess;
  stateDir: string;
  socketPath: string;
  tcp: { host: string; port: number } | null;
  stdout(): string;
  stderr(): string;
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface StartOptions {
  stateDir: string;
  args?: string[];
  env?: Record<string, string>;
  /** false: resolve when the process exits instead of when it is ready (for refused starts) */
  expectReady?: boolean;
  readyTimeoutMs?: number;
}

export async function startDaemon(opts: StartOptions): Promise<DaemonHandle> {
  const args = [...binArgs("daemon"), "--state-dir", opts.stateDir, ...(opts.args ?? [])];
  noteTestInstance(opts.stateDir);
  const proc = spawn(process.execPath, args, { cwd: REPO, env: cleanEnv(opts.env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  const handle: DaemonHandle = {
    proc,
    stateDir: opts.stateDir,
    socketPath: "",
    tcp: null,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
  if (opts.expectReady === false) {
    await exited;
    return handle;
  }
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  for (;;) {
    const m = /mini-agent-daemon ready pid=(\d+) socket=(\S+)(?: tcp=(\S+):(\d+))?/.exec(out);
    if (m) {
      handle.socketPath = m[2]!;
      if (m[3]) handle.tcp = { host: m[3], port: Number(m[4]) };
      return handle;
    }
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`daemon exited before ready (${String(proc.exitCode ?? proc.signalCode)}):\n${out}\n${err}`);
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`daemon not ready in time:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Removes the sandbox pool members of the daemon of this state dir (none when no engine answers). */
async function reapPoolMembers(stateDir: string): Promise<void> {
  const docker = createDockerClient(process.env);
  const label = [OWNER_FILTER, labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir)), labelFilter(PURPOSE_LABEL, POOL_PURPOSE)];
  try {
    for (const c of await docker.listContainers({ all: true, filters: { label } })) await docker.getContainer(c.Id).remove({ force: true, v: true });
    for (const v of (await docker.listVolumes({ filters: { label } })).Volumes ?? []) await docker.getVolume(v.Name).remove({ force: true });
  } catch {
    // no engine (the unit tier): nothing can have been made
  }
}

/**
 * The dependency layers a test daemon built (volumes that outlive runs on purpose, a user's cache
 * until `env gc`): a test's daemon leaves none behind, and the test run's leftover check looks for them.
 */
export async function removeLayerVolumes(stateDir: string): Promise<void> {
  const docker = createDockerClient(process.env);
  const label = [LAYER_LABEL, labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))];
  let names: string[];
  try {
    names = ((await docker.listVolumes({ filters: { label } })).Volumes ?? []).map((v) => v.Name);
  } catch {
    return; // no engine (the unit tier): nothing can have been made
  }
  // a refusal (a layer still mounted by a container the daemon left) fails the test that left it, not the run's end
  for (const name of names) {
    const refused = await forceRemove(docker.getVolume(name));
    if (refused !== null) throw new Error(`the dependency layer ${name} of the daemon on ${stateDir} could not be removed: ${refused}`);
  }
}

/** `<root>/state` (0700), already holding the test file's pinned sandbox image lock: a daemon started on it needs no image build. */
export function stateDirIn(root: string, imageLock: string): string {
  const stateDir = path.join(root, "state");
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.copyFileSync(imageLock, path.join(stateDir, "sandbox-image.lock.json"));
  return stateDir;
}

/** The JSON document a `--json` client command printed (after any log lines before it). */
export function printedJson(r: ClientResult): Record<string, unknown> {
  const lines = r.stdout.trim().split("\n");
  return JSON.parse(lines.slice(lines.findIndex((l) => l.startsWith("{"))).join("\n")) as Record<string, unknown>;
}

/** The temp dirs and daemons a test file made, so its hooks stop and remove exactly those. */
export class Started {
  private readonly daemons: DaemonHandle[] = [];
  private readonly dirs: string[] = [];

  dir(prefix: string): string {
    const d = tempDir(prefix);
    this.dirs.push(d);
    return d;
  }

  async daemon(opts: StartOptions): Promise<DaemonHandle> {
    const d = await startDaemon(opts);
    this.daemons.push(d);
    return d;
  }

  async stopDaemons(signal: NodeJS.Signals): Promise<void> {
    const stopped = this.daemons.splice(0);
    for (const d of stopped) await d.stop(signal);
    // A SIGKILLed daemon leaves its sandbox pool to the next daemon's start-up reaper; a test that
    // starts none on that state dir again plays that reaper here, for pool members only, so any
    // other leftover still fails the test run's leftover check.
    for (const d of stopped) if ((await d.exited) === "SIGKILL") await reapPoolMembers(d.stateDir);
    for (const d of stopped) await removeLayerVolumes(d.stateDir);
  }

  removeDirs(): void {
    for (const d of this.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  }
}

export interface ClientResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runClient(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<ClientResult> {
  const proc = spawn(process.execPath, [...binArgs("client"), ...args], {
    cwd: opts.cwd ?? REPO,
    env: cleanEnv(opts.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number>((resolve) => proc.on("exit", (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}

/** One raw HTTP request over the daemon's Unix socket (bypassing the client's own validation). */
export async function rawRequest(
  socketPath: string,
  method: "GET" | "POST",
  urlPath: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: unknown }> {
  const agent = new Agent({ connect: { socketPath } });
  try {
    const res = await request(`http://localhost${urlPath}`, {
      method,
      dispatcher: agent,
      ...(body !== undefined && { body }),
      headers: { "content-type": "application/json", ...headers },
    });
    const text = await res.body.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON (trace) */
    }
    return { status: res.statusCode, text, json };
  } finally {
    await agent.close();
  }
}

/** Every file under dir (recursively), for "no canary anywhere" checks. */
export function allFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(dir);
  return out;
}

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { pinFamilyImage } from "../sandbox-image/pin-image.js";
import type { ImageFamily } from "../sandbox-image/definitions.js";

/**
 * `npm run bench:approvals [-- --image-lock FILE]`
 * Approval fatigue, measured: each built-in fixture's canonical replay runs
 * through a real daemon and the real client on the container backend, once
 * with the built-in `interactive` policy and once with a policy file that
 * auto-approves writes to the fixtures' test files, and prints, per fixture
 * side by side, the prompts a person had to answer and the approvals the
 * policy made. Every run must end `completed` (verified by the host), or the
 * bench fails: fewer prompts on a run that did not finish prove nothing.
 *
 * Where each fixture's tests live (so which glob covers them):
 *   linkcheck (node)    tests/test_agent_*.js   -> tests/**
 *   semverlite (python) tests/test_agent_*.py   -> tests/**
 *   wordwrap (go)       agent_*_test.go at the root, beside the code (Go's convention) -> *_test.go
 *
 * Images: taken from --image-lock (default: the state dir's lock, as
 * `npm run image:build` writes it) when the engine has them, else built here.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const FIXTURES: Array<{ name: string; family: ImageFamily }> = [
  { name: "linkcheck", family: "node" },
  { name: "semverlite", family: "python" },
  { name: "wordwrap", family: "go" },
];
const AUTO_EDIT = ["tests/**", "*_test.go"];

function parseArgs(argv: string[]): { imageLock: string | null } {
  const o: { imageLock: string | null } = { imageLock: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--image-lock") o.imageLock = path.resolve(argv[++i] ?? "");
    else throw new Error(`unknown option ${a}; use --image-lock FILE`);
  }
  return o;
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const ENV = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/root",
  NO_COLOR: "1",
  ...(process.env.DOCKER_HOST && { DOCKER_HOST: process.env.DOCKER_HOST }),
};
const client = (args: string[]) => run(["--import", "tsx", path.join(REPO, "client/src/cli.ts"), ...args], ENV);

async function pinImages(lockPath: string, sourceLock: string): Promise<void> {
  const docker = createDockerClient(process.env);
  for (const { family } of FIXTURES) {
    await pinFamilyImage(docker, lockPath, family, sourceLock, (f) => process.stderr.write(`building the ${f} image...\n`));
  }
}

async function startDaemon(stateDir: string, policy: string | null) {
  const args = ["--import", "tsx", path.join(REPO, "daemon/src/cli.ts"), "--state-dir", stateDir, ...(policy ? ["--policy", policy] : [])];
  const p = spawn(process.execPath, args, { cwd: REPO, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  p.stdout.on("data", (d: Buffer) => (out += d.toString()));
  p.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const m = /mini-agent-daemon ready pid=\d+ socket=(\S+)/.exec(out);
    if (m) return { socket: m[1]!, stop: () => new Promise<void>((r) => (p.exitCode !== null ? r() : (p.once("exit", () => r()), p.kill("SIGTERM")))) };
    if (p.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Figures {
  prompts: number;
  by_policy: number;
  writes: number;
  status: string;
  run_id: string;
}

/** One fixture run: approve every prompt as a person would (answering y), then count from the trace. */
async function measure(socket: string, fixture: string, workspace: string): Promise<Figures> {
  const s = ["--socket", socket];
  let r = await client(["run", "--fixture", path.join(REPO, "fixtures", fixture), "--workspace", workspace, ...s]);
  const runId = /run (\S+) started/.exec(r.stdout)?.[1];
  if (!runId) throw new Error(`${fixture}: the run did not start:\n${r.stdout}${r.stderr}`);
  for (let i = 0; r.code === 3 && i < 20; i++) {
    const status = JSON.parse((await client(["status", runId, "--json", ...s])).stdout) as { action_id: string };
    r = await client(["approve", runId, status.action_id, ...s]);
  }
  const trace = (await client(["trace", runId, "--jsonl", ...s])).stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
  const view = JSON.parse((await client(["status", runId, "--json", ...s])).stdout) as { status: string; counters: { writes: number } };
  if (view.status !== "completed") throw new Error(`${fixture}: the run ended ${view.status}, not completed:\n${r.stdout}${r.stderr}`);
  const recorded = trace.filter((e) => e.type === "approval_recorded" && e.payload.decision === "approved");
  return {
    prompts: trace.filter((e) => e.type === "approval_requested").length,
    by_policy: recorded.filter((e) => String(e.payload.by).startsWith("policy:")).length,
    writes: view.counters.writes,
    status: view.status,
    run_id: runId,
  };
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-approvals-"));
  const stops: Array<() => Promise<void>> = [];
  try {
    const policyFile = path.join(root, "auto-edit-policy.json");
    fs.writeFileSync(policyFile, JSON.stringify({ schema_version: 1, auto_edit: AUTO_EDIT }, null, 2));
    const setups = [
      { name: "interactive", policy: null },
      { name: "auto_edit", policy: policyFile },
    ];
    const results: Record<string, Record<string, Figures>> = {};
    for (const setup of setups) {
      const stateDir = path.join(root, `state-${setup.name}`);
      fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      await pinImages(statePath(stateDir, "imageLock"), o.imageLock ?? statePath(resolveStateDir(process.env), "imageLock"));
      const d = await startDaemon(stateDir, setup.policy);
      stops.push(d.stop);
      for (const f of FIXTURES) {
        results[f.name] ??= {};
        results[f.name]![setup.name] = await measure(d.socket, f.name, path.join(root, `ws-${setup.name}-${f.name}`));
      }
      await d.stop();
    }
    const table = FIXTURES.map((f) => {
      const a = results[f.name]!.interactive!;
      const b = results[f.name]!.auto_edit!;
      const cells = [a.prompts, b.prompts, b.by_policy, b.writes].map((v, i) => String(v).padStart([11, 9, 9, 6][i]!));
      return `${f.name.padEnd(11)} ${f.family.padEnd(6)} ${cells.join("  ")}`;
    });
    process.stdout.write(
      [
        `prompts per run (approvals a person answered), container backend, canonical replays; auto_edit: ${JSON.stringify(AUTO_EDIT)}`,
        `${"".padEnd(18)}  ${"interactive".padStart(11)}  ${"auto_edit".padStart(9)}  ${"auto_edit".padStart(9)}`,
        `${"fixture".padEnd(11)} ${"family".padEnd(6)}  ${"prompts".padStart(11)}  ${"prompts".padStart(9)}  ${"by policy".padStart(9)}  ${"writes".padStart(6)}`,
        ...table,
        "",
        JSON.stringify({ auto_edit: AUTO_EDIT, results }, null, 2),
        "",
      ].join("\n"),
    );
    return 0;
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:approvals: ${(err as Error).message}\n`);
    process.exit(1);
  },
);

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binArgs, cleanEnv, REPO, runClient, Started, type ClientResult, type DaemonHandle } from "./harness.js";

/**
 * What a user reads when a run does not complete: the real daemon and the real
 * client, the linkcheck fixture's failing replays on the trusted_local backend
 * (host processes: the verdicts are the container's, see tests/verifier/), and
 * the client on a real pseudo-terminal (util-linux `script`) for colours and
 * the progress line.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
/** the hidden cases' expected answers (task.json): they must never reach the user */
const EXPECTED_ANSWERS = ["nowhere.md", "guide/broken.md", "shared.md"];

const started = new Started();
let d: DaemonHandle;
let root: string;

beforeAll(async () => {
  root = started.dir("ma-why-e2e-");
  d = await started.daemon({ stateDir: path.join(root, "state") });
});

afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

const socket = () => ["--socket", d.socketPath];
const runIdOf = (r: ClientResult) => /run (\S+) started/.exec(r.stdout)?.[1] ?? "";

/** approves each pending write the way a script would, until the run stops elsewhere */
async function approveAll(first: ClientResult): Promise<ClientResult> {
  let r = first;
  const runId = runIdOf(first);
  for (let i = 0; i < 5 && r.code === 3; i++) {
    const s = JSON.parse((await runClient(["status", runId, "--json", ...socket()])).stdout) as { action_id: string };
    r = await runClient(["approve", runId, s.action_id, ...socket()]);
  }
  return r;
}

function replay(name: string, extra: string[] = []): Promise<ClientResult> {
  const ws = path.join(root, `ws-${name}-${Math.random().toString(36).slice(2, 8)}`);
  const file = name === "replay" ? [] : ["--replay", path.join(FIXTURE, `replays/${name}.json`), "--trust-replay-file"];
  return runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--backend", "trusted_local", ...file, ...extra, ...socket()]);
}

function expectNoExpectedAnswers(text: string): void {
  for (const answer of EXPECTED_ANSWERS) expect(text).not.toContain(answer);
}

describe("the client says why a run did not complete", () => {
  it("regression: 'done' without any work printed only 'failed: verification_failed'; it says no_changes and which hidden cases failed", async () => {
    const r = await replay("final-without-work");
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: "" });
    expect(r.stdout).toContain(
      "failed: no_changes (the workspace is as the run found it); hidden acceptance 2/5 passed (nested_anchor_parent, nested_missing, nested_ok failed); candidate tests 2/2 passed\n",
    );
    const status = await runClient(["status", runIdOf(r), ...socket()]);
    expect(status.stdout).toContain("failed: no_changes");
    const list = await runClient(["list", ...socket()]);
    expect(list.stdout).toMatch(new RegExp(`${runIdOf(r)}  failed: no_changes .*nested_anchor_parent, nested_missing, nested_ok failed`));
    // biome-ignore lint/suspicious/noExplicitAny: the test reads deep into the parsed answer
    const json = JSON.parse((await runClient(["status", runIdOf(r), "--json", ...socket()])).stdout) as Record<string, any>;
    expect(json.verification.details).toEqual(expect.arrayContaining(["hidden acceptance case(s) failed: nested_anchor_parent, nested_missing, nested_ok"]));
    expect(json.verification.changed_path_count).toBe(0);
    expect(json.why).toContain("no_changes");
    expectNoExpectedAnswers(r.stdout + status.stdout + list.stdout + JSON.stringify(json));
  });

  it("an always-empty checker: green candidate tests, and the hidden cases it fails by id, never their answers", async () => {
    const r = await approveAll(await replay("always-empty"));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: "" });
    expect(r.stdout).toContain("failed: hidden acceptance 3/5 passed (nested_missing, root_missing failed); candidate tests 3/3 passed\n");
    expectNoExpectedAnswers(r.stdout);
  });

  it("an exhausted budget is named with its use and limit, and the resume command raises it", async () => {
    const r = await replay("replay", ["--max-tool-calls", "1"]);
    expect(r.code).toBe(5);
    expect(r.stdout).toContain(` resume --socket ${d.socketPath} ${runIdOf(r)} --max-tool-calls 2\n`);
    expect(r.stdout).toContain(`budget exhausted: tool_calls (1/1); resume with more budget: `);
  });
});

/** The client on a pseudo-terminal: every stream is a TTY, as for a user; each y/N is answered y. */
function onTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, ...binArgs("client"), ...args].map(quote).join(" ");
  const proc = spawn("script", ["-qefc", command, "/dev/null"], { cwd: REPO, env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let answered = 0;
  proc.stdout.on("data", (b: Buffer) => {
    output += b.toString();
    for (const asked = output.split("[y/N]").length - 1; answered < asked; answered++) proc.stdin.write("y\n");
  });
  proc.stderr.on("data", (b: Buffer) => (output += b.toString()));
  return new Promise((resolve) =>
    proc.on("exit", (code) => {
      proc.stdin.end();
      resolve({ code: code ?? -1, output });
    }),
  );
}

describe("on a terminal", () => {
  it("asks y/N over a diff in colour, keeps one erasable progress line, and ends with the verdict", async () => {
    const env = cleanEnv();
    delete env.NO_COLOR;
    const ws = path.join(root, "ws-tty");
    const r = await onTerminal(["run", "--fixture", FIXTURE, "--workspace", ws, "--backend", "trusted_local", ...socket()], env);
    expect({ code: r.code, tail: r.output.slice(-400) }).toMatchObject({ code: 0 });
    expect(r.output.split("[y/N]").length - 1).toBe(2);
    expect(r.output).toContain("\x1b[32m+"); // an added line, green
    expect(r.output).toContain("\x1b[36m@@"); // a hunk header, cyan
    expect(r.output).toContain("\r\x1b[2K"); // the progress line, drawn in place
    expect(r.output).toMatch(/\r\x1b\[2Kcompleted: verified by the host Verifier/); // erased before the verdict
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(true);

    const runId = /run (\S+) started/.exec(r.output)?.[1] ?? "";
    const coloured = await onTerminal(["diff", runId, ...socket()], env);
    expect(coloured.output).toContain("\x1b[32m+");
    const plain = await onTerminal(["diff", runId, ...socket()], { ...env, NO_COLOR: "1" });
    expect(plain.code).toBe(0);
    expect(plain.output).toContain("+++ b/src/linkcheck.js");
    expect(plain.output).not.toContain("\x1b[");
  });
});

describe("gc: what finished runs leave in the state dir", () => {
  it("frees an old finished run's files (dry first), keeps resumable runs, and the run stays known; health shows the state dir's size", async () => {
    // a run that can still be resumed: its budget ran out
    const paused = await replay("replay", ["--max-tool-calls", "1"]);
    const pausedId = runIdOf(paused);
    const first = await replay("replay");
    const doneId = runIdOf(first);
    const done = await approveAll(first);
    expect(done.code).toBe(0);
    const state = path.join(root, "state");
    const files = () => fs.readdirSync(path.join(state, "traces")).sort();

    const bad = await runClient(["gc", "--keep", "many", ...socket()]);
    expect({ code: bad.code, err: bad.stderr }).toMatchObject({ code: 64, err: expect.stringMatching(/--keep: use a whole number of runs/) });

    const before = files();
    const dry = await runClient(["gc", "--older-than", "0s", "--keep", "0", "--dry-run", "--json", ...socket()]);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as { runs: Array<{ run_id: string }>; bytes_freed: number; kept_open: number };
    expect(planned.runs.map((r) => r.run_id)).not.toContain(pausedId);
    expect(planned.runs.length).toBeGreaterThan(0);
    expect(planned.kept_open).toBeGreaterThanOrEqual(1);
    expect(files()).toEqual(before);

    const real = await runClient(["gc", "--older-than", "0s", "--keep", "0", ...socket()]);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/^freed \d+\.\d MiB: \d+ finished run\(s\)/);
    expect(files()).toContain(`${pausedId}.jsonl`);
    expect(files()).not.toContain(`${doneId}.jsonl`);
    expect(files().length).toBeLessThan(before.length);
    // the ledger still knows the run; what needed its files says so, without a stack
    const status = await runClient(["status", doneId, ...socket()]);
    expect(status.stdout).toContain("completed: verified by the host Verifier");
    const diff = await runClient(["diff", doneId, ...socket()]);
    expect(diff.stderr).not.toMatch(/\n\s+at /);
    // the resumable run is untouched
    expect(fs.readdirSync(path.join(state, "control")).some((n) => n.includes(pausedId))).toBe(true);

    const health = await runClient(["health", ...socket()]);
    expect(health.stdout).toMatch(
      new RegExp(`state +${state.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, \\d+\\.\\d MiB; free what finished runs left: .* gc .*--dry-run`),
    );
  });
});

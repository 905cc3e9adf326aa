import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { TaskSpec } from "../contracts/task-spec.js";
import type { Ledger } from "../store/ledger.js";
import { insertTestRun, tempLedgers, TEST_TASK } from "../store/ledger.testkit.js";
import { captureBaseline } from "../workspace/baseline.js";
import { createCaptureService } from "./index.js";

/**
 * capture over a real ledger and a real baseline copy (no engine needed): what
 * the run's rows say becomes expect.json, and repo/ is the baseline minus what
 * the task forbids.
 */
const ledgers = tempLedgers("ma-capture-ledger-");
const dirs: string[] = [];
afterEach(() => {
  ledgers.cleanup();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "ma-capture-"));
  dirs.push(d);
  return d;
}

const TASK = TaskSpec.parse({ ...TEST_TASK, forbidden: ["secret/**"], creatable: ["src/new_*.js"] });

/** a run whose workspace held forbidden files and a symlink, with a history of refused and passing calls */
async function finishedRun(
  status: "failed" | "running" = "failed",
  plant: (ws: string, root: string) => void = () => {},
): Promise<{ ledger: Ledger; ws: string }> {
  const root = tmp();
  const ws = path.join(root, "ws");
  const control = path.join(root, "control");
  fs.mkdirSync(path.join(ws, "src"), { recursive: true });
  fs.mkdirSync(path.join(ws, "secret"));
  fs.writeFileSync(path.join(ws, "src", "a.js"), "export const a = 1;\n");
  fs.writeFileSync(path.join(ws, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  fs.writeFileSync(path.join(ws, ".env"), "TOKEN=abc\n");
  fs.writeFileSync(path.join(ws, "secret", "plan.txt"), "hidden\n");
  fs.symlinkSync("/etc/passwd", path.join(ws, "passwd"));
  plant(ws, root);
  await captureBaseline(ws, control);
  // the run then changed the workspace: capture must not see it
  fs.writeFileSync(path.join(ws, "src", "a.js"), "export const a = 2;\n");
  fs.mkdirSync(path.join(control, "acceptance"));
  fs.writeFileSync(path.join(control, "acceptance", "cases.json"), "[]\n");

  const { ledger } = ledgers.open();
  insertTestRun(ledger, {
    status,
    reason: status === "failed" ? "verification_failed" : null,
    record: { task: TASK, workspace: ws, control_dir: control },
    state: {
      counters: { model_turns: 6, tool_calls: 5, writes: 1, elapsed_ms: 10_500, prompt_tokens: 100, completion_tokens: 20 },
      verification: {
        workspace_digest: "d",
        protected_paths_changed: ["README.md"],
        tests: { discovered: 1, passed: 1, failed: 0, exit_code: 0, timed_out: false, truncated: false },
        acceptance: null,
        passed: false,
        reason: "protected_path_changed",
      },
    },
  });
  const tool = (call_id: string, name: string, args: Record<string, unknown>) =>
    ledger.appendMessage("run_1", { schema_version: 1, role: "assistant", decision: { kind: "tool", call: { call_id, name, arguments: args } } });
  const result = (call_id: string, code: string | null) =>
    ledger.appendMessage("run_1", {
      schema_version: 1,
      role: "tool",
      result: { call_id, ok: code === null, data: null, error: code === null ? null : { code: code as never, message: "m" }, truncated: false },
    });
  ledger.appendMessage("run_1", { schema_version: 1, role: "assistant", decision: { kind: "plan", text: "go" } });
  tool("c1", "apply_patch", { path: "src/a.js", version: "0".repeat(64), old: "1", new: "2" });
  result("c1", "stale_version");
  tool("c2", "run_tests", { preset: "unit" });
  result("c2", "tests_failed");
  tool("c3", "run_command", { argv: ["curl", "x"] });
  result("c3", "policy_denied");
  tool("c4", "run_tests", { preset: "unit" });
  result("c4", null);
  tool("c5", "no_such_tool", {});
  result("c5", "unknown_tool");
  ledger.appendMessage("run_1", { schema_version: 1, role: "assistant", decision: { kind: "final", text: "done" } });
  return { ledger, ws };
}

/** the daemon's state dir of these tests: a folder of its own, outside every --out but the one that names it */
const service = (ledger: Ledger, stateDir = tmp()) => createCaptureService({ ledger: () => ledger, stateDir });

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("capture", () => {
  it("writes repo/ from the baseline (not the changed workspace) without forbidden files or symlinks, and says what it left out", async () => {
    const { ledger } = await finishedRun();
    const out = path.join(tmp(), "case");
    const r = await service(ledger).capture("run_1", out);
    expect(fs.readFileSync(path.join(out, "repo/src/a.js"), "utf8")).toBe("export const a = 1;\n");
    expect(fs.statSync(path.join(out, "repo/run.sh")).mode & 0o111).not.toBe(0);
    for (const gone of [".env", "secret/plan.txt", "passwd"]) expect(fs.existsSync(path.join(out, "repo", gone)), gone).toBe(false);
    expect(r.left_out).toEqual([".env", "passwd", "secret/plan.txt"]);
    expect(r.files).toEqual(["control/cases.json", "expect.json", "replay.json", "repo/run.sh", "repo/src/a.js", "task.json"]);
    expect(String(r.expect.description)).toContain("left out of repo/");
    expect(JSON.parse(fs.readFileSync(path.join(out, "task.json"), "utf8"))).toEqual(TASK);
    const replay = JSON.parse(fs.readFileSync(path.join(out, "replay.json"), "utf8"));
    expect(replay.decisions.map((d: { kind: string; call?: { call_id: string } }) => d.call?.call_id ?? d.kind)).toEqual([
      "plan",
      "c1",
      "c2",
      "c3",
      "c4",
      "c5",
      "final",
    ]);
  });

  it("regression: a hard-linked file (content from outside the workspace) and repository metadata stay out of the case, by the sandboxes' export rule (the hard link was written into repo/ with mode 0644)", async () => {
    const { ledger } = await finishedRun("failed", (ws, root) => {
      fs.writeFileSync(path.join(root, "outside-secret.txt"), "from outside the workspace\n");
      fs.linkSync(path.join(root, "outside-secret.txt"), path.join(ws, "src", "linked.txt"));
      fs.mkdirSync(path.join(ws, ".git", "refs", "heads"), { recursive: true });
      for (const f of ["HEAD", "config", "refs/heads/main"]) fs.writeFileSync(path.join(ws, ".git", f), "x\n");
    });
    const out = path.join(tmp(), "case");
    const r = await service(ledger).capture("run_1", out);
    expect(fs.existsSync(path.join(out, "repo/src/linked.txt"))).toBe(false);
    expect(fs.existsSync(path.join(out, "repo/.git"))).toBe(false);
    expect(r.files.filter((f) => f.startsWith("repo/"))).toEqual(["repo/run.sh", "repo/src/a.js"]);
    // one line per folder the rule refuses as a whole, one per path otherwise, each with its reason
    expect(r.left_out_groups).toEqual([
      { path: ".env", files: 1, reason: "forbidden" },
      { path: ".git/", files: 3, reason: "repository_metadata" },
      { path: "passwd", files: 1, reason: "symlink" },
      { path: "secret/", files: 1, reason: "forbidden" },
      { path: "src/linked.txt", files: 1, reason: "hard_link" },
    ]);
    expect(r.left_out).toContain("src/linked.txt");
    expect(String(r.expect.description)).toContain(".git/ (3 files): repository metadata");
  });

  it("regression: every symlink was left out of the case, so a suite's linked fixtures failed when the case ran; the links a sandbox got go into repo/ with the target it got, the rest stay out with their reason", async () => {
    const { ledger } = await finishedRun("failed", (ws, root) => {
      fs.mkdirSync(path.join(ws, "tests", "fixtures"), { recursive: true });
      fs.symlinkSync("../../src/a.js", path.join(ws, "tests", "fixtures", "a-link.js"));
      // absolute but inside: rewritten relative, as the sandbox gets it
      fs.symlinkSync(path.join(fs.realpathSync(ws), "run.sh"), path.join(ws, "tests", "run-link.sh"));
      fs.symlinkSync("../.env", path.join(ws, "src", "env-link"));
      // a file hard-linked in the workspace is a plain copy in the baseline: a link to it must not go in without it
      fs.writeFileSync(path.join(root, "outside.txt"), "outside\n");
      fs.linkSync(path.join(root, "outside.txt"), path.join(ws, "src", "hard.txt"));
      fs.symlinkSync("hard.txt", path.join(ws, "src", "hard-link"));
    });
    const out = path.join(tmp(), "case");
    const r = await service(ledger).capture("run_1", out);
    expect(fs.readlinkSync(path.join(out, "repo/tests/fixtures/a-link.js"))).toBe("../../src/a.js");
    expect(fs.readFileSync(path.join(out, "repo/tests/fixtures/a-link.js"), "utf8")).toBe("export const a = 1;\n");
    expect(fs.readlinkSync(path.join(out, "repo/tests/run-link.sh"))).toBe("../run.sh");
    for (const gone of ["src/env-link", "src/hard-link", "passwd"]) expect(fs.existsSync(path.join(out, "repo", gone)), gone).toBe(false);
    expect(r.files).toEqual(expect.arrayContaining(["repo/tests/fixtures/a-link.js", "repo/tests/run-link.sh"]));
    expect(r.left_out).toEqual(expect.arrayContaining(["passwd", "src/env-link", "src/hard-link", "src/hard.txt"]));
    expect(r.left_out).not.toContain("tests/fixtures/a-link.js");
  });

  it("derives expect.json from the run: only tools that succeeded, red before green, the protocol errors it made (replayed, they recur: expected, not a regression), forbids that held, stale calls, limits with tokens", async () => {
    const { ledger } = await finishedRun();
    const out = path.join(tmp(), "case");
    await service(ledger).capture("run_1", out);
    const e = JSON.parse(fs.readFileSync(path.join(out, "expect.json"), "utf8"));
    expect(e).toEqual({
      schema_version: 1,
      description: expect.any(String),
      status: "failed",
      reason: "verification_failed",
      // apply_patch was refused and run_command denied: only run_tests succeeded
      require: { must_call: ["run_tests"], red_before_green: true, protocol_errors: 1 },
      // a protected path changed and a command was denied: only the secret scan held
      forbid: { no_secret_in_diff: true },
      stale_calls: ["c1"],
      limits: { max_tool_calls: 5, max_turns: 6, max_seconds: Math.ceil(3 * 10.5 + 60), max_tokens: 120 },
    });
  });

  it("refuses a run that is not finished, naming its status, and writes nothing", async () => {
    const { ledger } = await finishedRun("running");
    const out = path.join(tmp(), "case");
    const r = await codeOf(service(ledger).capture("run_1", out));
    expect(r.code).toBe("capture_refused");
    expect(r.message).toContain("running");
    expect(fs.existsSync(out)).toBe(false);
  });

  it("refuses a run with no recorded decision", async () => {
    const { ledger } = ledgers.open();
    const root = tmp();
    fs.mkdirSync(path.join(root, "ws"));
    await captureBaseline(path.join(root, "ws"), path.join(root, "control"));
    insertTestRun(ledger, { status: "cancelled", record: { control_dir: path.join(root, "control") } });
    const r = await codeOf(service(ledger).capture("run_1", path.join(root, "case")));
    expect(r).toMatchObject({ code: "capture_refused" });
    expect(r.message).toContain("no decision");
  });

  it("writes into an empty folder, refuses a non-empty one, and leaves no temp folder behind", async () => {
    const { ledger } = await finishedRun();
    const svc = service(ledger);
    const parent = tmp();
    const empty = path.join(parent, "empty");
    fs.mkdirSync(empty);
    await svc.capture("run_1", empty);
    expect(fs.existsSync(path.join(empty, "expect.json"))).toBe(true);
    expect((await codeOf(svc.capture("run_1", empty))).code).toBe("capture_refused");
    expect(fs.readdirSync(parent)).toEqual(["empty"]);
  });

  it("regression: a missing parent of --out is made as mkdir -p would (it was refused: create it first)", async () => {
    const { ledger } = await finishedRun();
    const parent = tmp();
    await service(ledger).capture("run_1", path.join(parent, "cases", "new", "case"));
    expect(fs.existsSync(path.join(parent, "cases", "new", "case", "expect.json"))).toBe(true);
    expect(fs.readdirSync(path.join(parent, "cases", "new"))).toEqual(["case"]);
  });

  it("regression: --out inside the daemon's state dir is refused as a usage error, also through a link, and nothing is made there (it was accepted)", async () => {
    const { ledger } = await finishedRun();
    const state = tmp();
    const svc = service(ledger, state);
    const link = path.join(tmp(), "to-state");
    fs.symlinkSync(state, link);
    for (const out of [path.join(state, "case"), path.join(state, "deep", "er", "case"), state, path.join(link, "case")]) {
      const r = await codeOf(svc.capture("run_1", out));
      expect(r.code, out).toBe("capture_out_invalid");
      expect(r.message, out).toContain("inside the daemon's state dir");
      expect(r.message).not.toContain("\n");
    }
    expect(fs.readdirSync(state)).toEqual([]);
  });
});

import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rawRequest, REPO, runClient, Started } from "./harness.js";

/**
 * The policy file as a user meets it: the daemon refuses to start on a broken
 * one (file, line, reason), `policy show` prints what a run gets, and the
 * client names the rule that asked at each prompt. Spawned daemon and client;
 * runs on trusted_local (the built-in replay), so no engine is needed.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const started = new Started();

afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

function policyFile(text: string): string {
  const file = path.join(started.dir("ma-policy-file-"), "policy.json");
  fs.writeFileSync(file, text);
  return file;
}

describe("a broken policy file stops the daemon at start-up, naming the file, the line and the reason", () => {
  it.each([
    ["an unknown key", '{\n  "schema_version": 1,\n  "allow_all": true\n}\n', ":3: allow_all"],
    ["a bad value", '{\n  "schema_version": 1,\n  "tools": {\n    "write": "sometimes"\n  }\n}\n', ":4: tools.write"],
    ["text that is not JSON", '{\n  "schema_version": 1,\n  "auto_edit": [tests/**]\n}\n', ":3: not valid JSON"],
    ["ask for reads (nothing to approve)", '{\n  "schema_version": 1,\n  "tools": { "read": "ask" }\n}\n', ':3: tools.read: "ask" is only possible'],
  ])("%s", async (_what, text, expected) => {
    const file = policyFile(text);
    const stateDir = path.join(started.dir("ma-policy-state-"), "state");
    const d = await started.daemon({ stateDir, args: ["--policy", file], expectReady: false });
    expect(await d.exited).toBe(1);
    expect(d.stderr()).toContain(`${file}${expected}`);
    expect(d.stderr()).not.toMatch(/\n\s+at /); // a reason, not a stack
    // refused before anything was created: no state dir, no ledger, no socket
    expect(fs.existsSync(stateDir)).toBe(false);
  });

  it("a named file that does not exist is refused too (only the default may be missing)", async () => {
    const stateDir = path.join(started.dir("ma-policy-state-"), "state");
    const missing = path.join(stateDir, "..", "nope.json");
    const d = await started.daemon({ stateDir, args: ["--policy", missing], expectReady: false });
    expect(await d.exited).toBe(1);
    expect(d.stderr()).toContain(`${path.resolve(missing)}: cannot be read (ENOENT)`);
  });

  it("a broken DEFAULT file (<state-dir>/policy.json) is refused as well; never a silent fall-back", async () => {
    const stateDir = path.join(started.dir("ma-policy-state-"), "state");
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(stateDir, "policy.json"), '{"schema_version": 2}');
    const d = await started.daemon({ stateDir, expectReady: false });
    expect(await d.exited).toBe(1);
    expect(d.stderr()).toContain(`${path.join(stateDir, "policy.json")}:1: schema_version`);
  });
});

describe("policy show, --policy-profile and the rule at each prompt", () => {
  it("without a policy file the built-in policy applies, and policy show says so", async () => {
    const d = await started.daemon({ stateDir: path.join(started.dir("ma-policy-state-"), "state") });
    const shown = await runClient(["policy", "show", "--socket", d.socketPath]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("profile     interactive");
    expect(shown.stdout).toContain("built-in policy (no policy file)");
    expect(shown.stdout).toContain("write ask");
    expect(shown.stdout).toMatch(/deny tokens .*curl/);
  });

  it("shows the daemon file + profile + the workspace's tightening; a bad profile or subcommand is a usage error", async () => {
    const file = policyFile(
      JSON.stringify(
        { schema_version: 1, auto_edit: ["tests/**"], profiles: { ci: { auto_edit: ["tests/**", "docs/**"], tools: { command: "deny" } } } },
        null,
        2,
      ),
    );
    const d = await started.daemon({ stateDir: path.join(started.dir("ma-policy-state-"), "state"), args: ["--policy", file] });
    const ws = started.dir("ma-policy-ws-");
    fs.mkdirSync(path.join(ws, ".mini-agent"));
    fs.writeFileSync(path.join(ws, ".mini-agent/policy.json"), JSON.stringify({ auto_edit: [], commands: { deny_tokens: ["make"] } }));
    const shown = await runClient(["policy", "show", "--policy-profile", "ci", "--workspace", ws, "--json", "--socket", d.socketPath]);
    expect(shown.code).toBe(0);
    const body = JSON.parse(shown.stdout) as { policy: Record<string, unknown>; workspace_file: string };
    expect(body.policy).toMatchObject({
      profile: "ci",
      auto_edit: ["tests/**", "docs/**"],
      tools: { command: "deny", write: "ask" },
      source: file,
      workspace: { auto_edit: [], commands: { deny_tokens: ["make"] } },
    });
    expect(body.workspace_file).toBe(".mini-agent/policy.json");
    const text = await runClient(["policy", "show", "--workspace", ws, "--socket", d.socketPath]);
    expect(text.stdout).toContain("auto_edit   tests/**");
    expect(text.stdout).toContain(".mini-agent/policy.json tightens");

    const bad = await runClient(["policy", "show", "--policy-profile", "yolo", "--socket", d.socketPath]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("--policy-profile: use one of interactive, ci, eval");
    expect((await runClient(["policy", "list", "--socket", d.socketPath])).code).toBe(64);
    // the API itself refuses an unknown profile: 400, nothing resolved
    const raw = await rawRequest(d.socketPath, "GET", "/v1/policy?profile=yolo");
    expect(raw.status).toBe(400);
  });

  it("run --policy-profile: an unknown profile is exit 64 before anything is created; a known one is used, and every prompt names the rule that asked", async () => {
    const file = policyFile(JSON.stringify({ schema_version: 1, profiles: { ci: { auto_edit: ["tests/**"] } } }));
    const d = await started.daemon({ stateDir: path.join(started.dir("ma-policy-state-"), "state"), args: ["--policy", file] });
    const socket = ["--socket", d.socketPath];
    const root = started.dir("ma-policy-run-");

    const wsBad = path.join(root, "ws-bad");
    const bad = await runClient(["run", "--fixture", FIXTURE, "--workspace", wsBad, "--backend", "trusted_local", "--policy-profile", "auto", ...socket]);
    expect(bad.code).toBe(64);
    expect(fs.existsSync(wsBad)).toBe(false);
    expect(JSON.parse((await runClient(["list", "--json", ...socket])).stdout)).toEqual([]);

    const ws = path.join(root, "ws");
    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--backend", "trusted_local", "--policy-profile", "ci", ...socket]);
    expect(first.code).toBe(3);
    // the test write was approved by the ci profile's auto_edit; the prompt is the src write, naming its rule
    expect(first.stdout).toMatch(/approval_recorded decision=approved by=policy:ci:auto_edit:tests\/\*\*/);
    expect(first.stdout).toContain("  path:   src/linkcheck.js");
    expect(first.stdout).toContain("  asked by rule: policy:ci:tools.write");
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    const status = await runClient(["status", runId, ...socket]);
    expect(status.stdout).toContain("asked by policy:ci:tools.write");
    const actionId = (JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as { action_id: string }).action_id;
    const done = await runClient(["approve", runId, actionId, ...socket]);
    expect({ code: done.code, out: done.stdout + done.stderr }).toMatchObject({ code: 0 });
    const trace = (await runClient(["trace", runId, "--jsonl", ...socket])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    expect(trace.find((e) => e.type === "run_created")?.payload.policy).toMatchObject({ profile: "ci", source: "policy.json", tightened_by_workspace: false });
    expect(trace.filter((e) => e.type === "approval_recorded").map((e) => e.payload.by)).toEqual(["policy:ci:auto_edit:tests/**", "user"]);
  });

  it("regression: a workspace .mini-agent/policy.json's verify command (node -e) ran under ci, which denies it as run_command; now the run is refused with the rule, and nothing runs or is created", async () => {
    const d = await started.daemon({ stateDir: path.join(started.dir("ma-policy-state-"), "state") });
    const socket = ["--socket", d.socketPath];
    const root = started.dir("ma-policy-verify-");
    const fixture = path.join(root, "fixture");
    fs.cpSync(FIXTURE, fixture, { recursive: true });
    const marker = path.join(root, "MARKER");
    fs.mkdirSync(path.join(fixture, "repo/.mini-agent"));
    const command = ["node", "-e", `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran")`];
    fs.writeFileSync(path.join(fixture, "repo/.mini-agent/policy.json"), JSON.stringify({ verify_commands: [{ name: "sneak", command }] }));
    const ws = path.join(root, "ws");
    // the copied fixture's replay is not the canonical one: trusted explicitly, so the policy is what refuses
    const out = await runClient([
      "run",
      "--fixture",
      fixture,
      "--workspace",
      ws,
      "--backend",
      "trusted_local",
      "--trust-replay-file",
      "--policy-profile",
      "ci",
      ...socket,
    ]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('.mini-agent/policy.json: verify command "sneak"');
    expect(out.stderr).toContain("is refused: it is denied by policy:ci:commands.unlisted");
    expect(out.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(ws)).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
    expect(JSON.parse((await runClient(["list", "--json", ...socket])).stdout)).toEqual([]);
    // policy show still tells the user what the workspace file asks for
    const shown = await runClient(["policy", "show", "--policy-profile", "ci", "--workspace", path.join(fixture, "repo"), ...socket]);
    expect(shown.stdout).toContain('"verify_commands"');
  });
});

import { describe, expect, it } from "vitest";
import type { PolicyFile, PolicyRules } from "../contracts/policy.js";
import { TaskSpec } from "../contracts/task-spec.js";
import { SMALL_TASK } from "../tools/workspace.testkit.js";
import { decideCall } from "./decide-call.js";
import { resolveEffectivePolicy } from "./effective.js";

const task = TaskSpec.parse({ ...SMALL_TASK, forbidden: ["private/**"] });
const patch = (p: string, version = "0".repeat(64)) => ({ path: p, version, old: "a", new: "b" });
const policy = (file: Omit<PolicyFile, "schema_version"> = {}, workspace: PolicyRules | null = null, profile?: "interactive" | "ci" | "eval") =>
  resolveEffectivePolicy({ file: { schema_version: 1, ...file }, source: "/p.json", workspace, ...(profile && { profile }) });

describe("decideCall: the task's rules first (their deny is final), then the run's policy (deny > ask > allow)", () => {
  it.each([
    // the built-in interactive policy
    ["read_file", { path: "src/a.js" }, policy(), "allow", null, "policy:interactive:tools.read"],
    ["apply_patch", patch("src/a.js"), policy(), "ask", "approval_required", "policy:interactive:tools.write"],
    ["run_tests", { preset: "candidate" }, policy(), "allow", null, "policy:interactive:tools.test"],
    // the task's deny beats any policy allow
    ["apply_patch", patch("notes.txt"), policy({ tools: { write: "allow" } }), "deny", "not_writable", "task:not_writable"],
    ["apply_patch", patch("src/new.js", "absent"), policy({ auto_edit: ["**"] }), "deny", "not_writable", "task:not_writable"],
    ["read_file", { path: "private/x" }, policy(), "deny", "path_denied", "task:path_denied"],
    ["run_tests", { preset: "nope" }, policy({ tools: { test: "allow" } }), "deny", "unknown_preset", "task:unknown_preset"],
    // the policy's deny beats the task's ask or allow
    ["apply_patch", patch("src/a.js"), policy({ tools: { write: "deny" } }), "deny", "policy_denied", "policy:interactive:tools.write"],
    ["apply_patch", patch("src/a.js"), policy({ tools: { write: "deny" }, auto_edit: ["src/**"] }), "deny", "policy_denied", "policy:interactive:tools.write"],
    ["read_file", { path: "src/a.js" }, policy({ tools: { read: "deny" } }), "deny", "policy_denied", "policy:interactive:tools.read"],
    ["run_tests", { preset: "candidate" }, policy({ tools: { test: "deny" } }), "deny", "policy_denied", "policy:interactive:tools.test"],
    // auto_edit: inside -> approved by the policy, outside -> asks
    ["apply_patch", patch("tests/test_agent_x.js"), policy({ auto_edit: ["tests/**"] }), "allow", null, "policy:interactive:auto_edit:tests/**"],
    ["apply_patch", patch("src/a.js"), policy({ auto_edit: ["tests/**"] }), "ask", "approval_required", "policy:interactive:tools.write"],
    // profiles: the profile's rules over the file's
    ["apply_patch", patch("src/a.js"), policy({ profiles: { ci: { auto_edit: ["src/**"] } } }, null, "ci"), "allow", null, "policy:ci:auto_edit:src/**"],
    [
      "apply_patch",
      patch("src/a.js"),
      policy({ profiles: { ci: { auto_edit: ["src/**"] } } }, null, "interactive"),
      "ask",
      "approval_required",
      "policy:interactive:tools.write",
    ],
    // the workspace only tightens: it can take an auto-approval away or deny, never allow
    [
      "apply_patch",
      patch("tests/test_agent_x.js"),
      policy({ auto_edit: ["tests/**"] }, { auto_edit: [] }),
      "ask",
      "approval_required",
      "workspace:auto_edit (not listed)",
    ],
    [
      "apply_patch",
      patch("src/a.js"),
      policy({}, { tools: { write: "allow" }, auto_edit: ["src/**"] }),
      "ask",
      "approval_required",
      "policy:interactive:tools.write",
    ],
    ["read_file", { path: "src/a.js" }, policy({}, { tools: { read: "deny" } }), "deny", "policy_denied", "workspace:tools.read"],
    // auto_edit_writable (the eval profile): a write the task allows is approved by the policy
    ["apply_patch", patch("src/a.js"), policy({}, null, "eval"), "allow", null, "policy:eval:auto_edit_writable"],
    ["apply_patch", patch("src/a.js"), policy({}, null, "ci"), "ask", "approval_required", "policy:ci:tools.write"],
    ["apply_patch", patch("src/a.js"), policy({ auto_edit_writable: true }), "allow", null, "policy:interactive:auto_edit_writable"],
    // ...never past the task's own writable globs
    ["apply_patch", patch("notes.txt"), policy({}, null, "eval"), "deny", "not_writable", "task:not_writable"],
    // ...nor past tools.write deny
    [
      "apply_patch",
      patch("src/a.js"),
      policy({ profiles: { eval: { tools: { write: "deny" } } } }, null, "eval"),
      "deny",
      "policy_denied",
      "policy:eval:tools.write",
    ],
    // a workspace file can switch it off...
    ["apply_patch", patch("src/a.js"), policy({}, { auto_edit_writable: false }, "eval"), "ask", "approval_required", "workspace:auto_edit_writable (off)"],
    // ...and never on
    ["apply_patch", patch("src/a.js"), policy({}, { auto_edit_writable: true }), "ask", "approval_required", "policy:interactive:tools.write"],
    ["apply_patch", patch("src/a.js"), policy({}, { auto_edit_writable: true }, "ci"), "ask", "approval_required", "policy:ci:tools.write"],
    // run_command is decided here too, from its argv (decide-command.ts): the same rule for the model's calls and a workspace's verify commands
    ["run_command", { argv: ["curl", "x"] }, policy(), "deny", "policy_denied", "policy:interactive:deny_token:curl"],
    ["run_command", { argv: ["node", "-e", "0"] }, policy(), "ask", "approval_required", "policy:interactive:tools.command"],
    ["run_command", { argv: ["node", "-e", "0"] }, policy({}, null, "ci"), "deny", "policy_denied", "policy:ci:commands.unlisted"],
    ["run_command", { argv: ["node", "-e", "0"] }, policy({}, { commands: { deny_tokens: ["node"] } }), "deny", "policy_denied", "workspace:deny_token:node"],
  ] as const)("%s %j", (name, args, p, verdict, code, rule) => {
    expect(decideCall(name, args, task, p)).toMatchObject({ verdict, code, rule });
  });

  it("an unlisted command denied where nobody can be asked (ci) tells the model the shapes that do run, -P included", () => {
    const reason = decideCall("run_command", { argv: ["python3", "-m", "py_compile", "a.py"] }, task, policy({}, null, "ci")).reason;
    expect(reason).toContain("denied by policy:ci:commands.unlisted");
    expect(reason).toContain("python3 -P -m py_compile <path>...");
    // a deny token is not a matter of shape: no list
    expect(decideCall("run_command", { argv: ["curl", "x"] }, task, policy({}, null, "ci")).reason).not.toContain("Commands that run here");
  });

  it("a policy deny names its rule in the reason the model reads", () => {
    expect(decideCall("apply_patch", patch("src/a.js"), task, policy({ tools: { write: "deny" } })).reason).toBe(
      "writing src/a.js is denied by the policy (policy:interactive:tools.write)",
    );
  });
});

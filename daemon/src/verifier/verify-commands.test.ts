import { describe, expect, it } from "vitest";
import { TaskSpec, type VerifyCommand } from "../contracts/task-spec.js";
import { codeOf, errorOf } from "../errors.testkit.js";
import { resolveEffectivePolicy } from "../policy/effective.js";
import { parsePolicyText, parseWorkspacePolicy } from "../policy/policy-file.js";
import { PolicyFile } from "../contracts/policy.js";
import { runVerifyCommands } from "./verify-commands.js";

/**
 * Which extra verify commands a run gets (issue 12): the task's, the daemon
 * policy's (file, then the run's profile) and the workspace file's, each named
 * by its source; the workspace can add, never remove or redefine.
 */
const cmd = (name: string, ...command: string[]): VerifyCommand => ({ name, command, parser: "exit_code", timeout_seconds: 120 });
const TASK = TaskSpec.parse({
  schema_version: 1,
  name: "t",
  task: "x",
  writable: ["src/**"],
  test_presets: { unit: { command: ["node", "--test"] } },
  verify_preset: "unit",
  verify_commands: [{ name: "syntax", command: ["node", "--check", "src/a.js"] }],
});

describe("the run's verify commands", () => {
  it("come from the task, then the daemon's file and profile, then the workspace file, each labelled by source", () => {
    const file = parsePolicyText(
      JSON.stringify({
        schema_version: 1,
        verify_commands: [{ name: "lint", command: ["npx", "eslint", "."] }],
        profiles: { ci: { verify_commands: [{ name: "types", command: ["npx", "tsc", "--noEmit"] }] } },
      }),
      "policy.json",
      PolicyFile,
    );
    const workspace = parseWorkspacePolicy(JSON.stringify({ verify_commands: [{ name: "lint", command: ["node", "-e", "0"] }] }), ".mini-agent/policy.json");
    const policy = resolveEffectivePolicy({ file, source: "policy.json", profile: "ci", workspace });
    expect(runVerifyCommands(TASK, policy).map((c) => [c.label, c.command.join(" ")])).toEqual([
      ["task:syntax", "node --check src/a.js"],
      ["policy:lint", "npx eslint ."],
      ["policy:types", "npx tsc --noEmit"],
      ["workspace:lint", "node -e 0"],
    ]);
    // the interactive profile does not get the ci profile's command
    expect(resolveEffectivePolicy({ file, source: "policy.json", profile: "interactive" }).verify_commands).toEqual([cmd("lint", "npx", "eslint", ".")]);
  });

  it("a profile's command of the same name replaces the file's (the daemon's own layers); a workspace one never does", () => {
    const file = PolicyFile.parse({
      schema_version: 1,
      verify_commands: [{ name: "lint", command: ["npx", "eslint", "."] }],
      profiles: { eval: { verify_commands: [{ name: "lint", command: ["npx", "eslint", "--max-warnings", "0", "."] }] } },
    });
    const policy = resolveEffectivePolicy({ file, source: "p", profile: "eval", workspace: { verify_commands: [] } });
    expect(policy.verify_commands).toEqual([cmd("lint", "npx", "eslint", "--max-warnings", "0", ".")]);
    // an empty workspace list removes nothing
    expect(runVerifyCommands({}, policy).map((c) => c.label)).toEqual(["policy:lint"]);
  });

  it("no task commands and no policy: none (and a run resolved before verify commands existed has none)", () => {
    expect(runVerifyCommands({}, undefined)).toEqual([]);
    const old = resolveEffectivePolicy({ file: null, source: null });
    delete old.verify_commands;
    expect(runVerifyCommands({}, old)).toEqual([]);
  });

  it("a broken verify command in a policy file is refused with its line, never dropped", () => {
    const text = '{\n  "schema_version": 1,\n  "verify_commands": [\n    { "name": "lint", "command": ["npx", "eslint"], "shell": true }\n  ]\n}\n';
    expect(codeOf(() => parsePolicyText(text, "policy.json", PolicyFile))).toBe("policy_invalid");
    expect(errorOf(() => parsePolicyText(text, "policy.json", PolicyFile)).message).toMatch(/^policy\.json:4: verify_commands\.0\.shell: /);
  });
});

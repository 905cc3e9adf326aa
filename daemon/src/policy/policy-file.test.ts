import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf } from "../errors.testkit.js";
import { allowShapeHit, denyTokenHit } from "./command-match.js";
import { decideByPolicy, resolveEffectivePolicy } from "./effective.js";
import { loadPolicyFile, parseWorkspacePolicy } from "./policy-file.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function policyFile(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-policy-"));
  dirs.push(dir);
  const file = path.join(dir, "policy.json");
  fs.writeFileSync(file, text);
  return file;
}

describe("policy file", () => {
  it("refuses an unknown key with the file, its line and the key path (a misspelt `deny` must not silently allow)", () => {
    const file = policyFile('{\n  "schema_version": 1,\n  "tools": {\n    "comand": "allow"\n  }\n}\n');
    const e = errorOf(() => loadPolicyFile(file));
    expect(e.code).toBe("policy_invalid");
    expect(e.message).toContain(`${file}:4:`);
    expect(e.message).toContain("tools.comand");
  });

  it("refuses broken JSON and a bad value with their lines, and a missing named file", () => {
    expect(errorOf(() => loadPolicyFile(policyFile('{\n  "schema_version": 1,\n  "tools": {,\n}')))).toMatchObject({
      code: "policy_invalid",
      message: expect.stringMatching(/policy\.json:3: not valid JSON/),
    });
    const bad = policyFile('{\n  "schema_version": 1,\n  "profiles": {\n    "ci": {\n      "tools": { "write": "sometimes" }\n    }\n  }\n}\n');
    expect(errorOf(() => loadPolicyFile(bad)).message).toMatch(/policy\.json:5: profiles\.ci\.tools\.write: /);
    expect(errorOf(() => loadPolicyFile(policyFile('{"schema_version": 1, "profiles": {"nightly": {}}}'))).message).toContain("profiles.nightly");
    expect(errorOf(() => loadPolicyFile("/nonexistent/policy.json")).code).toBe("policy_invalid");
    expect(loadPolicyFile("/nonexistent/policy.json", { optional: true })).toBeNull();
  });

  it.each([
    ['{\n  "schema_version": 1,\n  "auto_edit": [tests/**]\n}\n', 3],
    ['{\n  "schema_version": 1\n  "auto_edit": []\n}\n', 3],
    ['{\n  "schema_version": 1,\n  "auto_edit": ["a"],\n', 4],
    ['{\n  "tools": {"write": \'deny\'}\n}', 2],
  ])("regression: broken JSON whose parser message names no position still gets its line (%j)", (text, line) => {
    expect(errorOf(() => loadPolicyFile(policyFile(text))).message).toMatch(new RegExp(`policy\\.json:${line}: not valid JSON`));
  });

  it.each([
    ['["gofmt", "<file>"]', "commands.allow.0.1: unknown placeholder <file>"],
    ['["<path>...", "x"]', "commands.allow.0.0: the first word is the program"],
    ['["make", "...", "x"]', 'commands.allow.0.1: "..." (any further words) can only end an entry'],
    ['["gofmt", "<path>...", "-l"]', "commands.allow.0.1: <path>... (one or more operands) can only end an entry"],
  ])("an allow entry with a placeholder it cannot mean is refused with its line, never read as a literal word (%s)", (entry, expected) => {
    const text = `{\n  "schema_version": 1,\n  "commands": {\n    "allow": [\n      ${entry}\n    ]\n  }\n}\n`;
    const e = errorOf(() => loadPolicyFile(policyFile(text)));
    expect(e.code).toBe("policy_invalid");
    expect(e.message).toContain(expected);
    expect(e.message).toMatch(/policy\.json:5: /);
  });
});

describe("deny tokens and the allowlist", () => {
  it("matches a deny token on any argv element and on basenames, multi-word tokens in order", () => {
    const tokens = ["curl", "git push", "rm -rf /"];
    expect(denyTokenHit(["curl", "http://x"], tokens)).toBe("curl");
    expect(denyTokenHit(["/usr/bin/curl", "x"], tokens)).toBe("curl");
    expect(denyTokenHit(["env", "FOO=1", "curl", "x"], tokens)).toBe("curl");
    expect(denyTokenHit(["git", "-C", "repo", "push", "origin"], tokens)).toBe("git push");
    expect(denyTokenHit(["git", "status"], tokens)).toBeNull();
    expect(denyTokenHit(["rm", "-rf", "/"], tokens)).toBe("rm -rf /");
    expect(denyTokenHit(["rm", "-rf", "build"], tokens)).toBeNull();
    expect(denyTokenHit(["echo", "curling"], tokens)).toBeNull();
  });

  it("denies every shell as a program: commands are argv, never a shell string", () => {
    expect(denyTokenHit(["sh", "-c", "npm test"], [])).toBe("shell:sh");
    expect(denyTokenHit(["env", "X=1", "/bin/bash"], [])).toBe("shell:bash");
    expect(denyTokenHit(["npx", "tsc"], [])).toBeNull();
  });

  it("allows by the whole argv (a trailing ... admits more words); the program is never matched by basename", () => {
    const allow = [["npm", "run", "lint"]];
    expect(allowShapeHit(["npm", "run", "lint"], allow)).toEqual(["npm", "run", "lint"]);
    expect(allowShapeHit(["npm", "run", "lint", "--", "--fix"], allow)).toBeNull();
    expect(allowShapeHit(["npm", "run", "lint", "--", "--fix"], [["npm", "run", "lint", "..."]])).toEqual(["npm", "run", "lint", "..."]);
    expect(allowShapeHit(["npm", "run", "lint:fix"], allow)).toBeNull();
    expect(allowShapeHit(["./npm", "run", "lint"], allow)).toBeNull();
    expect(allowShapeHit(["npm", "run"], allow)).toBeNull();
  });
});

describe("effective policy: deny beats ask beats allow", () => {
  const file = loadPolicyFile(
    policyFile(
      JSON.stringify({
        schema_version: 1,
        auto_edit: ["tests/**"],
        commands: {
          allow: [
            ["npm", "run", "lint"],
            ["curl", "-V"],
          ],
          deny_tokens: ["make deploy"],
        },
        profiles: { ci: { auto_edit: ["tests/**", "src/**"] } },
      }),
    ),
  );

  it("interactive: reads and tests run, writes ask except auto_edit, allowlisted commands run, the rest asks", () => {
    const p = resolveEffectivePolicy({ file, source: "policy.json" });
    expect(p.profile).toBe("interactive");
    expect(decideByPolicy(p, { class: "read" })).toEqual({ verdict: "allow", rule: "policy:interactive:tools.read" });
    expect(decideByPolicy(p, { class: "write", path: "tests/test_a.py" })).toEqual({ verdict: "allow", rule: "policy:interactive:auto_edit:tests/**" });
    expect(decideByPolicy(p, { class: "write", path: "src/a.py" })).toEqual({ verdict: "ask", rule: "policy:interactive:tools.write" });
    expect(decideByPolicy(p, { class: "command", argv: ["npm", "run", "lint"] })).toEqual({ verdict: "allow", rule: "policy:interactive:allow:npm run lint" });
    expect(decideByPolicy(p, { class: "command", argv: ["npx", "jest"] })).toEqual({ verdict: "ask", rule: "policy:interactive:tools.command" });
  });

  it("a deny token beats an allowlisted prefix, and the built-in deny tokens cannot be dropped by a file", () => {
    const p = resolveEffectivePolicy({ file, source: "policy.json" });
    expect(decideByPolicy(p, { class: "command", argv: ["curl", "-V"] })).toMatchObject({ verdict: "deny", rule: "policy:interactive:deny_token:curl" });
    expect(decideByPolicy(p, { class: "command", argv: ["make", "deploy"] })).toMatchObject({ verdict: "deny" });
    expect(p.deny_tokens).toEqual(expect.arrayContaining(["curl", "git push", "make deploy"]));
  });

  it("profiles: ci denies unlisted commands and takes its own auto_edit; an unknown profile name cannot be chosen", () => {
    const p = resolveEffectivePolicy({ file, source: "policy.json", profile: "ci" });
    expect(decideByPolicy(p, { class: "command", argv: ["npx", "jest"] })).toMatchObject({ verdict: "deny", rule: "policy:ci:commands.unlisted" });
    // regression: ci denied every command, so an allowlisted check could not run unattended
    expect(decideByPolicy(p, { class: "command", argv: ["npm", "run", "lint"] })).toMatchObject({ verdict: "allow", rule: "policy:ci:allow:npm run lint" });
    expect(decideByPolicy(p, { class: "write", path: "src/a.py" })).toMatchObject({ verdict: "allow", rule: "policy:ci:auto_edit:src/**" });
  });

  it("a workspace file only tightens: it cannot allow a denied command or auto-approve src/**, and can add a deny or take an auto-approval away", () => {
    const loosen = parseWorkspacePolicy(
      JSON.stringify({
        tools: { command: "allow", write: "allow" },
        auto_edit: ["src/**", "tests/**"],
        commands: { allow: [["curl"], ["npx", "jest"]], deny_tokens: [] },
      }),
      ".mini-agent/policy.json",
    );
    const base = resolveEffectivePolicy({ file, source: "policy.json" });
    const withWs = resolveEffectivePolicy({ file, source: "policy.json", workspace: loosen });
    for (const action of [
      { class: "command" as const, argv: ["curl", "http://example.invalid"] },
      { class: "command" as const, argv: ["npx", "jest"] },
      { class: "write" as const, path: "src/a.py" },
      { class: "write" as const, path: "tests/t.py" },
      { class: "read" as const },
    ]) {
      expect(decideByPolicy(withWs, action)).toEqual(decideByPolicy(base, action));
    }
    const tighten = parseWorkspacePolicy(JSON.stringify({ auto_edit: [], commands: { deny_tokens: ["npm run lint"] } }), "ws");
    const tight = resolveEffectivePolicy({ file, source: "policy.json", workspace: tighten });
    expect(decideByPolicy(tight, { class: "write", path: "tests/t.py" })).toEqual({ verdict: "ask", rule: "workspace:auto_edit (not listed)" });
    expect(decideByPolicy(tight, { class: "command", argv: ["npm", "run", "lint"] })).toEqual({ verdict: "deny", rule: "workspace:deny_token:npm run lint" });
  });

  it("commands.unlisted: an unlisted command gets the stricter of it and tools.command; tools.command deny still beats the allowlist; a workspace can only tighten it", () => {
    const withUnlisted = (rules: Record<string, unknown>, workspace: Record<string, unknown> | null = null) =>
      resolveEffectivePolicy({
        file: loadPolicyFile(policyFile(JSON.stringify({ schema_version: 1, ...rules }))),
        source: "policy.json",
        workspace: workspace === null ? null : parseWorkspacePolicy(JSON.stringify(workspace), "ws"),
      });
    const denyUnlisted = withUnlisted({ commands: { unlisted: "deny" } });
    expect(decideByPolicy(denyUnlisted, { class: "command", argv: ["make"] })).toEqual({ verdict: "deny", rule: "policy:interactive:commands.unlisted" });
    expect(decideByPolicy(denyUnlisted, { class: "command", argv: ["go", "vet"] }).verdict).toBe("allow");
    // tools.command allow would run anything; unlisted: ask keeps a person in the loop for what is not listed
    const askUnlisted = withUnlisted({ tools: { command: "allow" }, commands: { unlisted: "ask" } });
    expect(decideByPolicy(askUnlisted, { class: "command", argv: ["make"] })).toEqual({ verdict: "ask", rule: "policy:interactive:commands.unlisted" });
    const allDenied = withUnlisted({ tools: { command: "deny" } });
    expect(decideByPolicy(allDenied, { class: "command", argv: ["go", "vet"] })).toEqual({ verdict: "deny", rule: "policy:interactive:tools.command" });
    // the workspace cannot loosen ci's unlisted deny, and can add one to interactive
    const ci = resolveEffectivePolicy({
      file: null,
      source: null,
      profile: "ci",
      workspace: parseWorkspacePolicy(JSON.stringify({ commands: { unlisted: "ask" } }), "ws"),
    });
    expect(decideByPolicy(ci, { class: "command", argv: ["make"] })).toEqual({ verdict: "deny", rule: "policy:ci:commands.unlisted" });
    const tightened = withUnlisted({}, { commands: { unlisted: "deny" } });
    expect(decideByPolicy(tightened, { class: "command", argv: ["make"] })).toEqual({ verdict: "deny", rule: "workspace:commands.unlisted" });
    expect(decideByPolicy(tightened, { class: "command", argv: ["go", "vet"] }).verdict).toBe("allow");
  });

  it("without a file, the built-in policy applies (reads allow, writes ask, shells denied)", () => {
    const p = resolveEffectivePolicy({ file: null, source: null });
    expect(decideByPolicy(p, { class: "write", path: "a" }).verdict).toBe("ask");
    expect(decideByPolicy(p, { class: "test" }).verdict).toBe("allow");
    expect(decideByPolicy(p, { class: "command", argv: ["bash", "-c", "ls"] })).toMatchObject({
      verdict: "deny",
      rule: "policy:interactive:deny_token:shell:bash",
    });
    expect(decideByPolicy(p, { class: "command", argv: ["go", "vet", "./..."] }).verdict).toBe("allow");
  });
});

import { describe, expect, it } from "vitest";
import { denyTokenHit } from "./command-match.js";
import { BUILTIN_POLICY } from "./defaults.js";
import { decideByPolicy, resolveEffectivePolicy } from "./effective.js";

const tokens = BUILTIN_POLICY.commands!.deny_tokens!;
const interactive = resolveEffectivePolicy({ file: null, source: null });
const decide = (argv: string[]) => decideByPolicy(interactive, { class: "command", argv });

describe("run_command under the built-in policy", () => {
  it.each([
    [["curl", "https://example.com"], "deny", "policy:interactive:deny_token:curl"],
    [["/usr/bin/curl", "-s", "x"], "deny", "policy:interactive:deny_token:curl"],
    [["env", "curl", "x"], "deny", "policy:interactive:deny_token:curl"],
    [["git", "-C", "x", "push"], "deny", "policy:interactive:deny_token:git push"],
    [["sh", "-c", "node --check a.js"], "deny", "policy:interactive:deny_token:shell:sh"],
    [["node", "--check", "src/a.js"], "allow", "policy:interactive:allow:node --check"],
    [["go", "vet", "./..."], "allow", "policy:interactive:allow:go vet"],
    [["python3", "-m", "py_compile", "a.py"], "allow", "policy:interactive:allow:python3 -m py_compile"],
    [["node", "--version"], "ask", "policy:interactive:tools.command"],
    // an allowlisted prefix never lifts a deny token later in the argv
    [["node", "--check", "curl"], "deny", "policy:interactive:deny_token:curl"],
  ])("%j -> %s by %s", (argv, verdict, rule) => {
    expect(decide(argv)).toEqual({ verdict, rule });
  });

  it("keeps no allowlist entry for a check our images do not have (pyflakes)", () => {
    const allow = BUILTIN_POLICY.commands!.allow!.map((p) => p.join(" "));
    expect(allow).not.toContain("python3 -m pyflakes");
    expect(allow).toEqual(expect.arrayContaining(["npm run lint", "npx tsc --noEmit", "ruff check", "python -m mypy", "go vet", "node --check", "gofmt -l"]));
  });

  it("regression: a denied program hidden inside one argv element (env -S, --rsh=, -c alias=) is still denied", () => {
    expect(denyTokenHit(["env", "-S", "curl https://example.com"], tokens)).toBe("curl");
    expect(denyTokenHit(["rsync", "--rsh=ssh", "a", "b"], ["ssh"])).toBe("ssh");
    expect(denyTokenHit(["find", ".", "-exec=wget x"], tokens)).toBe("wget");
    expect(denyTokenHit(["git", "-c", "alias.p=push", "p", "origin"], tokens)).toBe("git push");
    expect(denyTokenHit(["env", "-S", "bash -c x"], [])).toBe("shell:bash");
    // words are still whole words: no substring matches
    expect(denyTokenHit(["node", "--check", "src/curling.js"], tokens)).toBeNull();
    expect(denyTokenHit(["node", "--title=curly", "x.js"], tokens)).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import { allowShapeHit, denyTokenHit } from "./command-match.js";
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
    [["node", "--check", "src/a.js"], "allow", "policy:interactive:allow:node --check <path>"],
    [["go", "vet", "./..."], "allow", "policy:interactive:allow:go vet <pkg>..."],
    [["python3", "-P", "-m", "py_compile", "a.py"], "allow", "policy:interactive:allow:python3 -P -m py_compile <path>..."],
    [["node", "--version"], "ask", "policy:interactive:tools.command"],
    // an allowlisted prefix never lifts a deny token later in the argv
    [["node", "--check", "curl"], "deny", "policy:interactive:deny_token:curl"],
  ])("%j -> %s by %s", (argv, verdict, rule) => {
    expect(decide(argv)).toEqual({ verdict, rule });
  });

  it("keeps no allowlist entry for a check our images do not have (pyflakes)", () => {
    const allow = BUILTIN_POLICY.commands!.allow!.map((p) => p.join(" "));
    expect(allow).not.toContain("python3 -m pyflakes");
    expect(allow).toEqual(
      expect.arrayContaining([
        "ruff check <path>...",
        "go vet",
        "go vet <pkg>...",
        "node --check <path>",
        "gofmt -l <path>...",
        "python3 -P -m py_compile <path>...",
      ]),
    );
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

describe("deny tokens after normalising options and npm's own command aliases", () => {
  it.each([
    [["python3", "-mpip", "install", "requests"], "policy:ci:deny_token:pip install"],
    [["python3", "-Impip", "install", "requests"], "policy:ci:deny_token:pip install"],
    [["npm", "isntall", "left-pad"], "policy:ci:deny_token:npm install"],
    [["npm", "add", "left-pad"], "policy:ci:deny_token:npm install"],
    [["npm", "i", "left-pad"], "policy:ci:deny_token:npm install"],
    [["npm", "insta", "left-pad"], "policy:ci:deny_token:npm install"],
    [["npm", "--global", "in", "left-pad"], "policy:ci:deny_token:npm install"],
    [["npm", "publis"], "policy:ci:deny_token:npm publish"],
    [["npm", "ci"], "policy:ci:deny_token:npm ci"],
    [["npm", "clean-install"], "policy:ci:deny_token:npm ci"],
    [["npm", "installTest"], "policy:ci:deny_token:npm install-test"],
    [["rm", "-fr", "/"], "policy:ci:deny_token:rm -rf /"],
    [["rm", "-f", "-r", "/"], "policy:ci:deny_token:rm -rf /"],
    [["rm", "-Rf", "//"], "policy:ci:deny_token:rm -rf /"],
    [["rm", "--recursive", "--force", "/."], "policy:ci:deny_token:rm -rf /"],
    [["chmod", "0777", "x"], "policy:ci:deny_token:chmod 777"],
    [["chmod", "-R", "1777", "x"], "policy:ci:deny_token:chmod 777"],
    [["chmod", "a+rwx", "x"], "policy:ci:deny_token:chmod 777"],
    [["chmod", "u=rwx,go+rwx", "x"], "policy:ci:deny_token:chmod 777"],
    [["git", "send-pack", "origin", "main"], "policy:ci:deny_token:git send-pack"],
    [["go", "run", "golang.org/x/tools/cmd/stringer@latest"], "policy:ci:deny_token:go run *@*"],
    [["go", "run", "-mod=mod", "example.com/x@v1.2.3", "arg"], "policy:ci:deny_token:go run *@*"],
  ])("regression: %j was an ask, not the deny its token means", (argv, rule) => {
    const ci = resolveEffectivePolicy({ file: null, source: null, profile: "ci" });
    // ci denies unlisted commands anyway: the rule that decided must be the deny token
    expect(decideByPolicy(ci, { class: "command", argv })).toEqual({ verdict: "deny", rule });
    expect(decideByPolicy(interactive, { class: "command", argv }).verdict).toBe("deny");
  });

  it("normalising adds words, never loses one: look-alikes that are not the denied command stay undecided by tokens", () => {
    expect(denyTokenHit(["rm", "-r", "build"], tokens)).toBeNull();
    expect(denyTokenHit(["rm", "-rf", "/tmp/x"], tokens)).toBeNull();
    expect(denyTokenHit(["chmod", "755", "x"], tokens)).toBeNull();
    expect(denyTokenHit(["chmod", "u+rwx", "x"], tokens)).toBeNull();
    expect(denyTokenHit(["npm", "test"], tokens)).toBeNull();
    expect(denyTokenHit(["npm", "run", "lint"], tokens)).toBeNull();
    expect(denyTokenHit(["go", "run", "./cmd/tool"], tokens)).toBeNull();
    expect(denyTokenHit(["python3", "-m", "pytest", "-x"], tokens)).toBeNull();
    // a person's own token is normalised the same way: "npm i" is npm's install
    expect(denyTokenHit(["npm", "isntall"], ["npm i"])).toBe("npm i");
    expect(denyTokenHit(["rm", "-r", "-f", "dist"], ["rm -fr dist"])).toBe("rm -fr dist");
  });
});

describe("a built-in allow entry describes the whole argv it allows", () => {
  const ci = resolveEffectivePolicy({ file: null, source: null, profile: "ci" });
  const evalProfile = resolveEffectivePolicy({ file: null, source: null, profile: "eval" });
  it.each(
    [
      // each ran sandbox code of the workspace's choosing with no approval, also under ci and eval
      ["node", "--check", "--import", "data:text/javascript,process.exit(7)", "src/a.js"],
      ["node", "--check", "--require", "./evil.cjs", "src/a.js"],
      ["python3", "-m", "py_compile", "a.py"], // a repo's own py_compile.py shadows the stdlib's without -P
      ["python", "-m", "py_compile", "a.py"],
      ["go", "vet", "-toolexec=/workspace/x", "./..."],
      ["go", "vet", "-vettool", "x", "./..."],
      ["gofmt", "-l", "-w", "."],
      // operands are workspace paths: relative, inside, never an option
      ["node", "--check", "../outside.js"],
      ["node", "--check", "/etc/passwd"],
      ["node", "--check", "-"],
      ["node", "--check", "a.js", "b.js"],
      ["go", "vet", "example.com/other@latest"],
      ["go", "vet", "./../x"],
      ["gofmt", "-l", "--", "-x.go"],
      // the project's own scripts and binaries are code by definition: no longer on the built-in list
      ["npm", "run", "lint"],
      ["npx", "tsc", "--noEmit"],
      ["python3", "-m", "mypy", "."],
    ].map((argv) => [argv]),
  )("regression: %j was allowed by a prefix; now unlisted (ask in interactive, denied in ci and eval)", (argv) => {
    expect(decide(argv).verdict).toBe("ask");
    expect(decideByPolicy(ci, { class: "command", argv })).toEqual({ verdict: "deny", rule: "policy:ci:commands.unlisted" });
    expect(decideByPolicy(evalProfile, { class: "command", argv }).verdict).toBe("deny");
  });

  it.each([
    [["node", "--check", "src/a.js"], "node --check <path>"],
    [["node", "--check", "./src/a.mjs"], "node --check <path>"],
    [["python3", "-P", "-m", "py_compile", "a.py", "pkg/b.py"], "python3 -P -m py_compile <path>..."],
    [["python", "-P", "-m", "py_compile", "a.py"], "python -P -m py_compile <path>..."],
    [["go", "vet"], "go vet"],
    [["go", "vet", "./..."], "go vet <pkg>..."],
    [["go", "vet", ".", "./internal/x/..."], "go vet <pkg>..."],
    [["gofmt", "-l", "."], "gofmt -l <path>..."],
    [["gofmt", "-l", "cmd/main.go", "internal"], "gofmt -l <path>..."],
  ])("%j is allowed by %s", (argv, shape) => {
    expect(decideByPolicy(ci, { class: "command", argv })).toEqual({ verdict: "allow", rule: `policy:ci:allow:${shape}` });
  });

  it("a policy file's entry is a whole argv too; `...` at its end admits any further words, by the file's own choice", () => {
    const allow = [
      ["npm", "run", "lint"],
      ["make", "check", "..."],
      ["eslint", "<path>..."],
    ];
    expect(allowShapeHit(["npm", "run", "lint"], allow)).toEqual(["npm", "run", "lint"]);
    expect(allowShapeHit(["npm", "run", "lint", "--", "--fix"], allow)).toBeNull();
    expect(allowShapeHit(["make", "check", "V=1"], allow)).toEqual(["make", "check", "..."]);
    expect(allowShapeHit(["make", "check"], allow)).toEqual(["make", "check", "..."]);
    expect(allowShapeHit(["eslint", "src", "tests/a.js"], allow)).toEqual(["eslint", "<path>..."]);
    expect(allowShapeHit(["eslint"], allow)).toBeNull();
    expect(allowShapeHit(["eslint", "--rulesdir", "x"], allow)).toBeNull();
    expect(allowShapeHit(["./npm", "run", "lint"], allow)).toBeNull();
  });
});

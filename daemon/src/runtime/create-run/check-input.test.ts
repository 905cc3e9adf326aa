import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../errors.js";
import type { TaskSpec } from "../../contracts/task-spec.js";
import { checkCreateInput } from "./check-input.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../fixtures");
const LINKCHECK = path.join(FIXTURES, "linkcheck");

describe("checkCreateInput: --image-family on a fixture or task-spec run", () => {
  const base = { model: "replay" as const, trustReplayFile: false, backend: "container" as const, fixtureDir: LINKCHECK };
  const workspace = () => path.join(os.tmpdir(), `ma-family-${process.pid}-${Math.random().toString(36).slice(2)}`);

  it("sets task.image_family, which the fixture's task.json does not name", () => {
    expect(checkCreateInput({ ...base, workspace: workspace() }, FIXTURES).task.image_family).toBeUndefined();
    expect(checkCreateInput({ ...base, workspace: workspace(), imageFamily: "python" }, FIXTURES).task.image_family).toBe("python");
  });

  // a well-formed name may be a custom family of the daemon's lock: the executor's preflight decides (image-pin.ts)
  it("refuses a name that cannot be a family with unknown_image_family, before a workspace exists", () => {
    const ws = workspace();
    let code: string | null = null;
    try {
      checkCreateInput({ ...base, workspace: ws, imageFamily: "Rust!" }, FIXTURES);
    } catch (err) {
      code = isMiniAgentError(err) ? err.code : "other";
    }
    expect(code).toBe("unknown_image_family");
    expect(fs.existsSync(ws)).toBe(false);
  });
});

describe("checkCreateInput: --runtime", () => {
  const base = { model: "replay" as const, trustReplayFile: false, fixtureDir: LINKCHECK };
  const workspace = () => path.join(os.tmpdir(), `ma-runtime-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const codeOf = (f: () => unknown) => {
    try {
      f();
      return null;
    } catch (err) {
      return isMiniAgentError(err) ? `${err.code}: ${err.message}` : "other";
    }
  };

  it("is accepted on the container backend", () => {
    expect(codeOf(() => checkCreateInput({ ...base, backend: "container", runtime: "runsc", workspace: workspace() }, FIXTURES))).toBeNull();
  });

  it("is refused with trusted_local (host processes have no OCI runtime), and an unknown one is refused, before a workspace exists", () => {
    const ws = workspace();
    expect(codeOf(() => checkCreateInput({ ...base, backend: "trusted_local", runtime: "runsc", workspace: ws }, FIXTURES))).toMatch(
      /^invalid_request: .*trusted_local/,
    );
    expect(codeOf(() => checkCreateInput({ ...base, backend: "container", runtime: "kata" as never, workspace: ws }, FIXTURES))).toMatch(
      /^invalid_request: unknown runtime "kata"; use runc or runsc/,
    );
    expect(fs.existsSync(ws)).toBe(false);
  });
});

describe("checkCreateInput: a workspace file's verify commands pass the command policy", () => {
  /** a copy of linkcheck whose repo/ carries its own rules file */
  function fixtureWithRules(rules: unknown): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-ws-verify-"));
    fs.cpSync(LINKCHECK, dir, { recursive: true });
    fs.mkdirSync(path.join(dir, "repo/.mini-agent"));
    fs.writeFileSync(path.join(dir, "repo/.mini-agent/policy.json"), JSON.stringify(rules));
    return dir;
  }
  const input = (fixtureDir: string, policyProfile: "ci" | "interactive") => ({
    model: "replay" as const,
    trustReplayFile: false,
    backend: "container" as const,
    fixtureDir,
    policyProfile,
    workspace: path.join(os.tmpdir(), `ma-ws-verify-${process.pid}-${Math.random().toString(36).slice(2)}`),
  });

  it("one the policy allows is kept, and run_created will name the rule that let it run", () => {
    const dir = fixtureWithRules({ verify_commands: [{ name: "syntax", command: ["node", "--check", "src/linkcheck.js"] }] });
    expect(checkCreateInput(input(dir, "ci"), FIXTURES).policy.trace.workspace_verify_commands).toEqual([
      { name: "syntax", argv: ["node", "--check", "src/linkcheck.js"], rule: "policy:ci:allow:node --check <path>" },
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("regression: node -e from the workspace ran under ci, which denies it as run_command: refused, policy_denied, before a workspace exists", () => {
    const dir = fixtureWithRules({ verify_commands: [{ name: "sneak", command: ["node", "-e", "0"] }] });
    const i = input(dir, "ci");
    let err: unknown = null;
    try {
      checkCreateInput(i, FIXTURES);
    } catch (e) {
      err = e;
    }
    expect(isMiniAgentError(err) && err.code).toBe("policy_denied");
    expect(String((err as Error).message)).toContain("policy:ci:commands.unlisted");
    expect(fs.existsSync(i.workspace)).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("checkCreateInput: the workspace", () => {
  const base = { model: "replay" as const, trustReplayFile: false, backend: "container" as const };
  const codeOf = (f: () => unknown) => {
    try {
      f();
      return null;
    } catch (err) {
      return isMiniAgentError(err) ? { code: err.code, message: err.message } : "other";
    }
  };

  it("regression: a task-spec run in a system folder (/etc, /usr/local, a link to /var/lib) or a fixture copied below /opt was accepted", () => {
    const spec = JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8")) as TaskSpec;
    const links = fs.mkdtempSync(path.join(os.tmpdir(), "ma-sys-link-"));
    try {
      fs.symlinkSync("/var/lib", path.join(links, "lib-link"));
      for (const ws of ["/etc", "/usr/local", path.join(links, "lib-link")]) {
        expect(
          codeOf(() => checkCreateInput({ ...base, workspace: ws, taskSpec: spec }, FIXTURES)),
          ws,
        ).toEqual({
          code: "invalid_workspace",
          message: expect.stringMatching(/system folder \/(etc|usr|var);/),
        });
      }
      // not created yet: judged by where it would be, before anything is made
      const fresh = path.join(links, "lib-link", `ma-never-${process.pid}`);
      expect(codeOf(() => checkCreateInput({ ...base, workspace: fresh, fixtureDir: LINKCHECK }, FIXTURES))).toMatchObject({ code: "invalid_workspace" });
      expect(fs.existsSync(fresh)).toBe(false);
      expect(codeOf(() => checkCreateInput({ ...base, workspace: "/opt/ma-never/ws", fixtureDir: LINKCHECK }, FIXTURES))).toMatchObject({
        code: "invalid_workspace",
      });
      // a temp folder is where tests and users keep workspaces: still accepted
      expect(codeOf(() => checkCreateInput({ ...base, workspace: path.join(links, "ws"), fixtureDir: LINKCHECK }, FIXTURES))).toBeNull();
    } finally {
      fs.rmSync(links, { recursive: true, force: true });
    }
  });
});

describe("checkCreateInput: --sandbox-include", () => {
  const base = { model: "replay" as const, trustReplayFile: false, backend: "container" as const, fixtureDir: LINKCHECK };
  const workspace = () => path.join(os.tmpdir(), `ma-include-${process.pid}-${Math.random().toString(36).slice(2)}`);

  it("regression: a wildcard opt-in (`*`, `**`, `.env*`, `config/*.key`, `{a,b}`) was accepted and lifted every forbidden file it matched", () => {
    for (const glob of ["*", "**", ".env*", "config/*.key", "certs/{a,b}.pem", "id_?sa", "keys/[ab].key", "+(x).key"]) {
      const ws = workspace();
      let refusal: { code: string; message: string } | null = null;
      try {
        checkCreateInput({ ...base, workspace: ws, sandboxInclude: [".env.test", glob] }, FIXTURES);
      } catch (err) {
        if (isMiniAgentError(err)) refusal = { code: err.code, message: err.message };
      }
      expect(refusal, glob).toEqual({
        code: "invalid_glob",
        message: expect.stringContaining(`--sandbox-include ${JSON.stringify(glob)} is refused: a wildcard would let every forbidden file`),
      });
      expect(refusal?.message).toContain("name each file the tests need by its path, e.g. --sandbox-include .env.test");
      expect(fs.existsSync(ws)).toBe(false);
    }
    expect(
      checkCreateInput({ ...base, workspace: workspace(), sandboxInclude: [".env.test", "config/dev.key", ".ssh/known_hosts"] }, FIXTURES).sandboxInclude,
    ).toEqual([".env.test", "config/dev.key", ".ssh/known_hosts"]);
  });
});

describe("checkCreateInput: hidden_tests", () => {
  it("a task-spec run whose task has hidden_tests but no control dir is refused: the Verifier could never lay them over", () => {
    const spec = { ...(JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8")) as TaskSpec), hidden_tests: "hidden_tests" };
    delete (spec as Partial<TaskSpec>).acceptance;
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), "ma-hidden-"));
    try {
      let got: string | null = null;
      try {
        checkCreateInput(
          { model: "replay", trustReplayFile: false, backend: "container", workspace: ws, taskSpec: spec, replayPath: path.join(LINKCHECK, "replay.json") },
          FIXTURES,
        );
      } catch (err) {
        got = isMiniAgentError(err) ? `${err.code}: ${err.message}` : "other";
      }
      expect(got).toBe("invalid_request: the task has hidden_tests but no control dir was given");
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { McpOptionError, parseHttpAddress, resolveMcpOptions } from "./options.js";
import { TOOLS } from "./tools.js";
import { resolveWorkspaceArg } from "./workspace-arg.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-mcp-opts-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function tokenFile(name: string, mode: number, token = "t".repeat(40)): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, token);
  fs.chmodSync(file, mode);
  return file;
}

describe("mcp --http: loopback only, a 0600 token file", () => {
  it("accepts 127.0.0.1, ::1 and localhost with a port (0: any free one)", () => {
    expect(parseHttpAddress("127.0.0.1:8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseHttpAddress("[::1]:0")).toEqual({ host: "::1", port: 0 });
    expect(parseHttpAddress("localhost:9000")).toEqual({ host: "localhost", port: 9000 });
  });

  it.each(["0.0.0.0:8765", "192.168.1.10:8765", "[::]:8765", "example.com:80", "127.0.0.1", "127.0.0.1:99999", ":8765"])(
    "refuses %s before anything listens (a server reachable from another machine would lend out the daemon's sandboxes)",
    (addr) => {
      expect(() => parseHttpAddress(addr)).toThrow(McpOptionError);
    },
  );

  it("refuses --http without a token file, and a token file without --http", () => {
    expect(() => resolveMcpOptions({ http: "127.0.0.1:0" }, dir)).toThrow(/--http needs --token-file/);
    expect(() => resolveMcpOptions({ tokenFile: tokenFile("lonely", 0o600) }, dir)).toThrow(/--token-file is for --http/);
  });

  it("refuses a token file others can read, and a short token, with the daemon's own token-file codes", () => {
    for (const [file, code] of [
      [tokenFile("wide", 0o644), "credentials_insecure"],
      [tokenFile("group", 0o640), "credentials_insecure"],
      [tokenFile("short", 0o600, "abc"), "credentials_insecure"],
      [path.join(dir, "missing"), "credentials_missing"],
    ] as const) {
      let caught: unknown;
      try {
        resolveMcpOptions({ http: "127.0.0.1:0", tokenFile: file }, dir);
      } catch (err) {
        caught = err;
      }
      expect(isMiniAgentError(caught) && caught.code).toBe(code);
    }
    expect(resolveMcpOptions({ http: "127.0.0.1:0", tokenFile: tokenFile("ok", 0o600) }, dir).http).toEqual({
      host: "127.0.0.1",
      port: 0,
      token: "t".repeat(40),
    });
  });

  it("resolves --workspace against the caller's folder", () => {
    expect(resolveMcpOptions({ workspace: "proj" }, "/home/u")).toEqual({ workspace: "/home/u/proj" });
  });
});

describe("the tools' input schemas are the daemon's request contracts", () => {
  const input = (name: string) => TOOLS.find((t) => t.name === name)!.input;

  it("refuse unknown fields, an empty workspace, a huge test command, unknown protect globs of the wrong type", () => {
    expect(input("sandbox_run_tests").safeParse({ workspace: "/w", shell: "sh" }).success).toBe(false);
    expect(input("sandbox_run_tests").safeParse({ workspace: "" }).success).toBe(false);
    expect(input("sandbox_run_tests").safeParse({ workspace: "a\0b" }).success).toBe(false);
    expect(input("sandbox_run_tests").safeParse({ test: "x".repeat(4097) }).success).toBe(false);
    expect(input("verify").safeParse({ protect: "notes.txt" }).success).toBe(false);
    expect(input("verify").safeParse({ protect: Array(33).fill("a") }).success).toBe(false);
    expect(input("isolation_status").safeParse({ family: "" }).success).toBe(false);
    expect(input("sandbox_exec").safeParse({ argv: [] }).success).toBe(false);
    expect(input("sandbox_exec").safeParse({ argv: Array(65).fill("a") }).success).toBe(false);
    expect(input("sandbox_exec").safeParse({ argv: "rm -rf /" }).success).toBe(false);
    expect(input("sandbox_exec").safeParse({ argv: ["node"], timeout_seconds: 601 }).success).toBe(false);
  });

  it("accept a call without a workspace (the server's --workspace fills it) and with one", () => {
    expect(input("sandbox_run_tests").safeParse({}).success).toBe(true);
    expect(input("verify").safeParse({ workspace: "/w", goal: "g", protect: ["notes.txt"], test: "node --test tests/" }).success).toBe(true);
    expect(input("verify_begin").safeParse({ workspace: "/w" }).success).toBe(true);
  });
});

describe("a tool's workspace relative to the server's --workspace", () => {
  const input = (name: string) => TOOLS.find((t) => t.name === name)!.input;
  const server = path.join(dir, "server-ws");
  fs.mkdirSync(path.join(server, "packages", "api"), { recursive: true });
  fs.mkdirSync(path.join(dir, "beside"), { recursive: true });
  fs.symlinkSync(path.join(dir, "beside"), path.join(server, "out-link"));
  const code = (f: () => unknown) => {
    try {
      f();
      return null;
    } catch (err) {
      return isMiniAgentError(err) ? `${err.code}: ${err.message}` : String(err);
    }
  };

  it("regression: the tools took absolute workspace paths only; a relative one is resolved against --workspace, and the schemas and descriptions say so", () => {
    expect(input("sandbox_exec").safeParse({ workspace: "packages/api", argv: ["node", "-v"] }).success).toBe(true);
    for (const t of TOOLS.filter((t) => t.name !== "isolation_status")) expect(t.description, t.name).toContain("relative to the server's --workspace");
    expect(resolveWorkspaceArg("packages/api", server)).toBe(path.join(server, "packages", "api"));
    expect(resolveWorkspaceArg(".", server)).toBe(server);
    expect(resolveWorkspaceArg(undefined, server)).toBe(server);
    expect(resolveWorkspaceArg("/abs/elsewhere", server)).toBe("/abs/elsewhere");
  });

  it("refuses a relative workspace that leads outside --workspace, by name or through a link, and one with no --workspace to resolve against", () => {
    expect(code(() => resolveWorkspaceArg("../beside", server))).toMatch(/^invalid_workspace: workspace "\.\.\/beside" leads outside the server's --workspace/);
    expect(code(() => resolveWorkspaceArg("packages/../../beside", server))).toMatch(/^invalid_workspace: .*leads outside/);
    expect(code(() => resolveWorkspaceArg("out-link", server))).toMatch(/^invalid_workspace: .*leads outside/);
    expect(code(() => resolveWorkspaceArg("packages/api", undefined))).toMatch(
      /^invalid_workspace: .*no --workspace to resolve it against; give an absolute path/,
    );
    expect(code(() => resolveWorkspaceArg(undefined, undefined))).toMatch(/^invalid_request: no workspace/);
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import type { InstallKind } from "../sandbox/install-tools.js";
import { createEnvBuild, type InstallerPort, toolOf } from "./env-build.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-env-build-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("which tool an install command runs (env-build.ts)", () => {
  it("the command's first word decides; else the workspace's files; else npm", () => {
    const ws = fs.mkdtempSync(path.join(dir, "ws-"));
    expect(toolOf("pip install -r requirements.txt", ws)).toBe("pip");
    expect(toolOf("python3.11 -m pip install x", ws)).toBe("pip");
    expect(toolOf("go mod vendor", ws)).toBe("go");
    expect(toolOf("npm ci", ws)).toBe("npm");
    expect(toolOf("make deps", ws)).toBe("npm");
    fs.writeFileSync(path.join(ws, "requirements.txt"), "x\n");
    expect(toolOf("make deps", ws)).toBe("pip");
    fs.writeFileSync(path.join(ws, "go.mod"), "module x\n");
    expect(toolOf("make deps", ws)).toBe("go");
  });
});

describe("an install of another tool than the family's own (env-build.ts)", () => {
  /** installers that record each install they are asked for, of the built-in kinds and one custom family FROM python */
  function installers(): { asked: string[]; installerFor: (family: string) => InstallerPort } {
    const asked: string[] = [];
    const kindOf: Record<string, InstallKind | null> = { node: "npm", python: "pip", go: "go", pylint: "pip", nobase: null };
    return {
      asked,
      installerFor: (family) => ({
        installKind: kindOf[family] ?? null,
        install: async (req) => {
          asked.push(`${family}: ${req.command}`);
          return { exitCode: 1, timedOut: false, stdout: "", stderr: "", egress: [], layer: null, oomKilled: false, memoryBytes: 1 << 29 };
        },
      }),
    };
  }
  const build = (deps: ReturnType<typeof installers>, ws: string, install: string, imageFamily?: string) =>
    createEnvBuild({ installerFor: deps.installerFor, home: null })({
      workspace: ws,
      install,
      allowHosts: [],
      timeoutMs: 60_000,
      ...(imageFamily && { imageFamily }),
    });

  // Regression: `--install "pip install …"` in the node family made a node install sandbox with pip's plan,
  // which failed inside it with "exec /usr/bin/python3: No such file or directory" (exit 127).
  it("is refused before any sandbox is made, naming the family and its tool", async () => {
    const ws = fs.mkdtempSync(path.join(dir, "ws-"));
    fs.writeFileSync(path.join(ws, "requirements.txt"), "six\n");
    fs.writeFileSync(path.join(ws, "package.json"), "{}\n");
    const deps = installers();
    for (const [install, family, msg] of [
      ["pip install -r requirements.txt", "node", /the node family installs with npm alone, not pip: .*--image-family python/],
      ["npm ci", "python", /the python family installs with pip alone, not npm/],
      ["npm ci", "pylint", /the pylint family installs with pip alone, not npm/],
    ] as const) {
      const err = await build(deps, ws, install, family).catch((e: unknown) => e);
      expect(isMiniAgentError(err) && err.code, String(err)).toBe("invalid_request");
      expect((err as Error).message).toMatch(msg);
    }
    expect(deps.asked).toEqual([]);
    // the family's own tool goes ahead, and so does a command that names no tool: the family's own is used
    await build(deps, ws, "pip install -r requirements.txt", "python");
    await build(deps, ws, "make deps", "pylint");
    await build(deps, ws, "pip install six");
    expect(deps.asked).toEqual(["python: pip install -r requirements.txt", "pylint: make deps", "python: pip install six"]);
    expect(toolOf("make deps", ws, "pip")).toBe("pip");
  });
});

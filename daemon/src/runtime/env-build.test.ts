import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toolOf } from "./env-build.js";

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

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { miniAgentVersion } from "./version.js";

describe("miniAgentVersion", () => {
  it("is the version in mini-agent's own package.json (the daemon, the worker and run_created all read it here)", () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { name: string; version: string };
    expect(pkg.name).toBe("mini-agent");
    expect(miniAgentVersion()).toBe(pkg.version);
    expect(miniAgentVersion()).not.toBe("unknown");
  });
});

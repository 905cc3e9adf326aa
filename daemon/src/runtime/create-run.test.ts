import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { checkCreateInput } from "./create-run.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures");
const LINKCHECK = path.join(FIXTURES, "linkcheck");

describe("checkCreateInput: --image-family on a fixture or task-spec run", () => {
  const base = { model: "replay" as const, trustReplayFile: false, backend: "container" as const, fixtureDir: LINKCHECK };
  const workspace = () => path.join(os.tmpdir(), `ma-family-${process.pid}-${Math.random().toString(36).slice(2)}`);

  it("sets task.image_family, which the fixture's task.json does not name", () => {
    expect(checkCreateInput({ ...base, workspace: workspace() }, FIXTURES).task.image_family).toBeUndefined();
    expect(checkCreateInput({ ...base, workspace: workspace(), imageFamily: "python" }, FIXTURES).task.image_family).toBe("python");
  });

  it("refuses an unknown family with unknown_image_family, before a workspace exists", () => {
    const ws = workspace();
    let code: string | null = null;
    try {
      checkCreateInput({ ...base, workspace: ws, imageFamily: "rust" }, FIXTURES);
    } catch (err) {
      code = isMiniAgentError(err) ? err.code : "other";
    }
    expect(code).toBe("unknown_image_family");
    expect(fs.existsSync(ws)).toBe(false);
  });
});

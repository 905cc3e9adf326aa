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

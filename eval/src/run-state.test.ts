import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { result } from "./report.testkit.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { caseFile, markStarted, openOutput, planCase, workspacePath, writeCaseResult } from "./run-state.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "eval-state-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const H1 = "1".repeat(64);
const H2 = "2".repeat(64);
const settings = { schema_version: 1 as const, model: "replay" as const, runtime: "runc" as const, policy_profile: "eval" };

describe("resume bookkeeping in the output folder", () => {
  it("a case never started runs as attempt 1", () => {
    openOutput(dir, settings, false);
    expect(planCase(dir, "a", H1, false)).toEqual({ kind: "run", attempt: 1, staleRunId: null });
  });

  it("a finished case of the same version is skipped; --rerun runs it again as attempt 1", () => {
    openOutput(dir, settings, false);
    markStarted(dir, "a", { attempts: 1, run_id: "r1", hash: H1 });
    writeCaseResult(dir, result({ id: "a", hash: H1 }));
    expect(planCase(dir, "a", H1, false).kind).toBe("skip");
    expect(planCase(dir, "a", H1, true)).toEqual({ kind: "run", attempt: 1, staleRunId: null });
  });

  it("regression: a changed case (another version hash) is re-run, not skipped on its old result", () => {
    openOutput(dir, settings, false);
    writeCaseResult(dir, result({ id: "a", hash: H1 }));
    expect(planCase(dir, "a", H2, false)).toEqual({ kind: "run", attempt: 1, staleRunId: null });
  });

  it("regression: a case started but never finished (killed daemon) is re-run with attempts + 1 and its old run named for cancelling", () => {
    openOutput(dir, settings, false);
    markStarted(dir, "a", { attempts: 1, run_id: "r1", hash: H1 });
    expect(planCase(dir, "a", H1, false)).toEqual({ kind: "run", attempt: 2, staleRunId: "r1" });
  });

  it("a result file that does not parse is never taken as done", () => {
    openOutput(dir, settings, false);
    fs.writeFileSync(path.join(dir, "cases", "a.json"), "{ torn");
    expect(planCase(dir, "a", H1, false).kind).toBe("run");
  });

  it("resuming with other settings is refused and changes nothing; --rerun takes the new settings", () => {
    openOutput(dir, settings, false);
    expect(() => openOutput(dir, { ...settings, runtime: "runsc" }, false)).toThrow(/runtime runc.*runtime runsc.*--rerun/s);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "settings.json"), "utf8")).runtime).toBe("runc");
    openOutput(dir, { ...settings, runtime: "runsc" }, true);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "settings.json"), "utf8")).runtime).toBe("runsc");
  });

  it("regression: an output subfolder that is a link out of the output folder is refused before anything is written (case files went through it)", () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "eval-state-outside-"));
    try {
      fs.mkdirSync(path.join(dir, "out"));
      fs.symlinkSync(outside, path.join(dir, "out", "traces"));
      const code = (f: () => unknown) => {
        try {
          f();
          return "accepted";
        } catch (err) {
          return isMiniAgentError(err) ? err.code : String(err);
        }
      };
      expect(code(() => openOutput(path.join(dir, "out"), settings, false))).toBe("path_escape");
      expect(fs.existsSync(path.join(dir, "out", "settings.json"))).toBe(false);
      // each path named after a case is checked after resolution too (a link planted after the output was opened)
      expect(code(() => caseFile(path.join(dir, "out"), "traces", "a.jsonl"))).toBe("path_escape");
      fs.mkdirSync(path.join(dir, "out", "workspaces"));
      fs.symlinkSync(outside, path.join(dir, "out", "workspaces", "a.1"));
      expect(code(() => workspacePath(path.join(dir, "out"), "a", 1))).toBe("path_escape");
      expect(code(() => workspacePath(path.join(dir, "out"), "..", 1))).toBe("accepted");
      expect(fs.readdirSync(outside)).toEqual([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SavedRunStates } from "./saved-state.js";

const dirs: string[] = [];
const stateDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "saved-state-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const saved = (runId = "run_0123456789abcdef0123") => ({ schema_version: 1 as const, run_id: runId, sdk_version: "0.20.0", state: '{"$schemaVersion":"1.0"}' });

describe("SavedRunStates: the paused RunState in <state>/orchestrators/agents-sdk/", () => {
  it("saves atomically with 0700 folders and a 0600 file, loads it back, and removes it", async () => {
    const dir = stateDir();
    const states = new SavedRunStates(dir);
    await states.save(saved());
    const file = path.join(dir, "orchestrators", "agents-sdk", "run_0123456789abcdef0123.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, "orchestrators")).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual(["run_0123456789abcdef0123.json"]); // no temp file left
    expect(await states.load("run_0123456789abcdef0123")).toEqual({ kind: "found", saved: saved() });
    await states.remove("run_0123456789abcdef0123");
    expect(await states.load("run_0123456789abcdef0123")).toEqual({ kind: "absent" });
  });

  it("does not trust a torn, foreign or other run's file: invalid, with why", async () => {
    const dir = stateDir();
    const states = new SavedRunStates(dir);
    await states.save(saved());
    const file = states.fileFor("run_0123456789abcdef0123");
    fs.writeFileSync(file, '{"schema_version":1,"run_id":"run_0123');
    expect(await states.load("run_0123456789abcdef0123")).toEqual({ kind: "invalid", why: "not JSON" });
    fs.writeFileSync(file, JSON.stringify({ ...saved(), extra: true }));
    expect((await states.load("run_0123456789abcdef0123")).kind).toBe("invalid");
    fs.writeFileSync(file, JSON.stringify(saved("run_other")));
    expect(await states.load("run_0123456789abcdef0123")).toEqual({ kind: "invalid", why: "it belongs to run run_other" });
  });

  it("refuses a run id that could name a file outside its folder (ids in general may hold '.' and ':')", async () => {
    const states = new SavedRunStates(stateDir());
    expect(() => states.fileFor("..")).toThrow(/cannot name a saved state file/);
    await expect(states.save(saved("../x"))).rejects.toMatchObject({ code: "internal" });
  });
});

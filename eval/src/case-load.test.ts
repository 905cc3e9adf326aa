import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { sha256Hex } from "../../daemon/src/workspace/hash.js";
import { loadCase, loadSuite } from "./case-load.js";

const FIXTURE = path.resolve(__dirname, "../../fixtures/linkcheck");
const tmps: string[] = [];
afterEach(() => {
  for (const d of tmps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "case-load-"));
  tmps.push(d);
  return d;
}

/** a linkcheck case folder (the fixture plus an expect.json) named `id` under `parent` */
function makeCase(parent = tmp(), id = "linkcheck-canonical"): string {
  const dir = path.join(parent, id);
  fs.mkdirSync(dir);
  for (const part of ["repo", "control", "task.json", "replay.json"]) fs.cpSync(path.join(FIXTURE, part), path.join(dir, part), { recursive: true });
  writeJson(dir, "expect.json", { schema_version: 1, status: "completed", description: "canonical fix" });
  return dir;
}

function writeJson(dir: string, name: string, v: unknown): void {
  fs.writeFileSync(path.join(dir, name), `${JSON.stringify(v, null, 2)}\n`);
}
// biome-ignore lint/suspicious/noExplicitAny: test edits of arbitrary JSON files
type Json = any;
function readJson(dir: string, name: string): Json {
  return JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message, details: err.details ?? {} };
    throw err;
  }
  throw new Error("expected a refusal, but the case loaded");
}

describe("loadCase", () => {
  it("refuses a case whose repo/ holds a 1.5 GiB sparse file before reading it (counted by its length; the client never buffers it)", async () => {
    const dir = makeCase();
    const img = path.join(dir, "repo", "disk.img");
    fs.writeFileSync(img, "");
    fs.truncateSync(img, 1.5 * 1024 ** 3);
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("workspace_too_large");
    expect(r.message).toMatch(/^case repo\/ too large: 1\.5 GiB in \d+ files \(limit 96 MiB: .*\); raise with --max-workspace-bytes$/);
    // with the limit raised, a 100 MiB one loads (hashed in pieces; the replay check reads only the files the replay names)
    fs.truncateSync(img, 100 * 1024 ** 2);
    await expect(loadCase(dir, { maxBytes: 128 * 1024 ** 2, maxFiles: 20_000 })).resolves.toMatchObject({ id: "linkcheck-canonical" });
  }, 120_000);

  it("loads a good case: id is the folder name, the task, replay and expect parsed, control/ seen", async () => {
    const dir = makeCase();
    const c = await loadCase(dir);
    expect(c.id).toBe("linkcheck-canonical");
    expect(c.dir).toBe(dir);
    expect(c.hasControl).toBe(true);
    expect(c.task.name).toBe(readJson(FIXTURE, "task.json").name);
    expect(c.replay.decisions).toHaveLength(readJson(FIXTURE, "replay.json").decisions.length);
    expect(c.expect.status).toBe("completed");
    expect(c.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each(["task.json", "replay.json", "expect.json", "repo"])("refuses a case without %s, naming it (case_invalid)", async (part) => {
    const dir = makeCase();
    fs.rmSync(path.join(dir, part), { recursive: true });
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain(path.join(dir, part));
  });

  it("refuses an unknown field in expect.json, naming the file and the zod path", async () => {
    const dir = makeCase();
    writeJson(dir, "expect.json", { schema_version: 1, status: "completed", require: { must_cal: ["run_tests"] } });
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain(path.join(dir, "expect.json"));
    expect(r.message).toContain("must_cal");
    expect(r.details.paths).toEqual(["require"]);
  });

  it("refuses an expect.json without the expected status (every case has a verdict)", async () => {
    const dir = makeCase();
    writeJson(dir, "expect.json", { schema_version: 1 });
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.details.paths).toEqual(["status"]);
  });

  it("refuses an unknown entry in the case folder (a misspelt file never goes unnoticed)", async () => {
    const dir = makeCase();
    fs.writeFileSync(path.join(dir, "expects.json"), "{}");
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain("expects.json");
  });

  it("refuses a bad task.json (not a TaskSpec), naming the file and field", async () => {
    const dir = makeCase();
    writeJson(dir, "task.json", { ...readJson(dir, "task.json"), writable: [] });
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain(path.join(dir, "task.json"));
    expect(r.details.paths).toEqual(["writable"]);
  });

  it("refuses a bad replay.json (not a ReplayFile), naming the file and field", async () => {
    const dir = makeCase();
    const replay = readJson(dir, "replay.json");
    replay.decisions[1].call.extra = 1;
    writeJson(dir, "replay.json", replay);
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain(path.join(dir, "replay.json"));
    expect(r.details.paths).toEqual(["decisions.1.call"]);
  });

  it("refuses replay.json that is not JSON", async () => {
    const dir = makeCase();
    fs.writeFileSync(path.join(dir, "replay.json"), "{ nope");
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain("not valid JSON");
  });

  it("refuses a symlink in repo/, naming it", async () => {
    const dir = makeCase();
    fs.symlinkSync("/etc/passwd", path.join(dir, "repo", "passwd"));
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain("repo/passwd is a symlink");
  });

  it("refuses a replay whose apply_patch version no longer fits repo/ (repo/ edited after capture), naming the call and path", async () => {
    const dir = makeCase();
    fs.appendFileSync(path.join(dir, "repo", "src", "linkcheck.js"), "// edited\n");
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_replay_mismatch");
    expect(r.message).toContain("call_04_fix");
    expect(r.details).toMatchObject({ call_id: "call_04_fix", path: "src/linkcheck.js" });
  });

  it("refuses a create (`absent`) of a file repo/ already has", async () => {
    const dir = makeCase();
    fs.writeFileSync(path.join(dir, "repo", "tests", "test_agent_nested.js"), "x\n");
    const r = await refusal(loadCase(dir));
    expect(r.code).toBe("case_replay_mismatch");
    expect(r.details).toMatchObject({ call_id: "call_02_add_test", path: "tests/test_agent_nested.js" });
  });

  it("lets a stale version through only for a call listed in stale_calls", async () => {
    const dir = makeCase();
    fs.copyFileSync(path.join(FIXTURE, "replays", "stale-version.json"), path.join(dir, "replay.json"));
    expect((await refusal(loadCase(dir))).details).toMatchObject({ call_id: "call_01_stale" });
    writeJson(dir, "expect.json", { schema_version: 1, status: "failed", stale_calls: ["call_01_stale"] });
    await expect(loadCase(dir)).resolves.toMatchObject({ id: "linkcheck-canonical" });
  });

  it("accepts a version that an earlier patch in the replay produced (a second patch on the patched file)", async () => {
    const dir = makeCase();
    const replay = readJson(dir, "replay.json");
    const fix = replay.decisions.find((d: Json) => d.call?.call_id === "call_04_fix").call.arguments;
    const before = fs.readFileSync(path.join(dir, "repo", fix.path), "utf8");
    const after = before.replace(fix.old, fix.new);
    const second = {
      kind: "tool",
      call: { call_id: "call_09_again", name: "apply_patch", arguments: { path: fix.path, version: sha256Hex(after), old: fix.new, new: `${fix.new} ` } },
    };
    replay.decisions.splice(-1, 0, second);
    writeJson(dir, "replay.json", replay);
    await expect(loadCase(dir)).resolves.toMatchObject({ id: "linkcheck-canonical" });
    // and the same call quoting the ORIGINAL version again is fine too (it is a state the file had)
    second.call.arguments.version = sha256Hex(before);
    second.call.arguments.old = fix.old;
    writeJson(dir, "replay.json", replay);
    await expect(loadCase(dir)).resolves.toMatchObject({ id: "linkcheck-canonical" });
    second.call.arguments.version = sha256Hex("never\n");
    writeJson(dir, "replay.json", replay);
    expect((await refusal(loadCase(dir))).details).toMatchObject({ call_id: "call_09_again" });
  });

  it("the hash changes with repo/, task.json, control/ and expect.json, and not with replay.json", async () => {
    const dir = makeCase();
    let last = (await loadCase(dir)).hash;
    const changed = async (edit: () => void) => {
      edit();
      const h = (await loadCase(dir)).hash;
      const differs = h !== last;
      last = h;
      return differs;
    };
    expect(await changed(() => fs.writeFileSync(path.join(dir, "repo", "NOTES.md"), "n\n"))).toBe(true);
    expect(await changed(() => fs.chmodSync(path.join(dir, "repo", "NOTES.md"), 0o755))).toBe(true);
    expect(await changed(() => writeJson(dir, "task.json", { ...readJson(dir, "task.json"), name: "other-name" }))).toBe(true);
    expect(await changed(() => fs.writeFileSync(path.join(dir, "control", "extra.txt"), "x\n"))).toBe(true);
    expect(await changed(() => writeJson(dir, "expect.json", { schema_version: 1, status: "failed" }))).toBe(true);
    expect(await changed(() => writeJson(dir, "replay.json", { schema_version: 1, decisions: [{ kind: "final", text: "done" }] }))).toBe(false);
  });
});

describe("loadSuite", () => {
  it("takes a folder of cases and a case folder itself, sorted by id, with the suite hash over id:hash lines", async () => {
    const parent = tmp();
    makeCase(parent, "b-case");
    makeCase(parent, "a-case");
    const single = makeCase(tmp(), "c-case");
    const s = await loadSuite([parent, single]);
    expect(s.cases.map((c) => c.id)).toEqual(["a-case", "b-case", "c-case"]);
    const lines = s.cases.map((c) => `${c.id}:${c.hash}\n`).join("");
    expect(s.hash).toBe(sha256Hex(lines));
  });

  it("refuses two cases with the same id, naming both paths", async () => {
    const one = makeCase(tmp(), "same");
    const two = makeCase(tmp(), "same");
    const r = await refusal(loadSuite([one, path.dirname(two)]));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain(one);
    expect(r.message).toContain(two);
  });

  it("refuses an empty suite", async () => {
    const r = await refusal(loadSuite([tmp()]));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain("no case found");
  });

  it("refuses a suite when one of its cases is bad, naming that case's file", async () => {
    const parent = tmp();
    makeCase(parent, "good");
    const bad = makeCase(parent, "bad");
    fs.rmSync(path.join(bad, "expect.json"));
    const r = await refusal(loadSuite([parent]));
    expect(r.code).toBe("case_invalid");
    expect(r.message).toContain(path.join(bad, "expect.json"));
  });
});

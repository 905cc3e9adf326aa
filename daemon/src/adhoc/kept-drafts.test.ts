import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf } from "../errors.testkit.js";
import { type DraftInput, draftTask } from "./draft.js";
import { KeptDrafts } from "./kept-drafts.js";

/** Kept drafts on a real folder: what was drafted runs only while the files it was drafted from are unchanged. */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function project(): string {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "ma-kept-"));
  dirs.push(ws);
  fs.writeFileSync(path.join(ws, "package.json"), JSON.stringify({ name: "p", scripts: { test: "node --test tests/" } }));
  fs.mkdirSync(path.join(ws, "tests"));
  fs.writeFileSync(path.join(ws, "tests", "a.test.js"), "");
  return ws;
}

async function drafted(ws: string, now = () => 0) {
  const input: DraftInput = { workspace: ws, goal: "g", writable: [], protect: [] };
  const draft = await draftTask(input, { stateDir: path.join(os.tmpdir(), "ma-kept-no-state"), homeDirs: [] });
  const kept = new KeptDrafts({ now, ttlMs: 1000, max: 2 });
  return { input, draft, kept, id: kept.keep(input, draft) };
}

describe("KeptDrafts", () => {
  it("gives the draft back, once, while the folder is as it was drafted", async () => {
    const { input, draft, kept, id } = await drafted(project());
    expect(id).toMatch(/^drf_[0-9a-f]{20}$/);
    expect(kept.take(id, input)).toBe(draft);
    expect(errorOf(() => kept.take(id, input))).toMatchObject({ code: "draft_stale" });
  });

  it("refuses the draft (draft_stale, naming the file) when a file it was drafted from changed since", async () => {
    const ws = project();
    const { input, kept, id } = await drafted(ws);
    fs.writeFileSync(path.join(ws, "package.json"), JSON.stringify({ name: "p", scripts: { test: "node --test spec/" } }));
    expect(errorOf(() => kept.take(id, input))).toMatchObject({ code: "draft_stale", message: expect.stringContaining("(package.json)") });
  });

  it("refuses a draft taken for other input, and one that expired", async () => {
    let t = 0;
    const { input, kept, id } = await drafted(project(), () => t);
    expect(errorOf(() => kept.take(id, { ...input, goal: "another goal" }))).toMatchObject({ code: "invalid_request" });
    const again = kept.keep(input, (await drafted(input.workspace)).draft);
    t = 5000;
    expect(errorOf(() => kept.take(again, input))).toMatchObject({ code: "draft_stale" });
  });
});

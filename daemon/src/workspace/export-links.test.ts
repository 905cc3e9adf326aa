import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_LINK_TARGET } from "./export-links.js";
import { listExport } from "./sandbox-export.js";

/**
 * The link part of the export rule, on real trees: a symlink enters a sandbox
 * only when its whole resolution stays inside the workspace, passes through
 * exported entries only and ends on one; it goes in with a relative target
 * through real folders. Everything else is left out and counted by reason.
 */
let root: string;
let ws: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-links-"));
  ws = path.join(root, "ws");
  const files: Record<string, string> = {
    "fixtures/real/a.js": "a",
    "fixtures/real/b.js": "b",
    "src/index.js": "i",
    ".env": "PASSWORD=hunter2",
    "private/answers.json": "{}",
    ".git/config": "[remote] url=https://user:token@host",
    "node_modules/dep/index.js": "dep",
  };
  for (const [rel, body] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
    await fs.writeFile(path.join(ws, rel), body);
  }
  await fs.writeFile(path.join(root, "outside.txt"), "host secret");
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const link = (target: string, rel: string) => fs.symlink(target, path.join(ws, rel));
const SPEC = { forbidden: ["private/**"], include: [] as string[] };

async function linksOf(spec: Parameters<typeof listExport>[1] = SPEC) {
  const l = await listExport(ws, spec);
  return { sent: Object.fromEntries(l.entries.filter((e) => e.type === "symlink").map((e) => [e.rel, e.target])), out: l.linksLeftOut };
}

describe("listExport: workspace symlinks (export-links.ts)", () => {
  it("lets in links that resolve inside to exported entries: files, folders, chains, absolute-but-inside (rewritten relative), the root", async () => {
    await link("real", "fixtures/linked");
    await link("real/a.js", "fixtures/a-link.js");
    await link("../fixtures/linked/b.js", "src/chain.js");
    await link("chain.js", "src/chain2.js");
    await link(path.join(ws, "fixtures/real/a.js"), "abs.js");
    await link(path.join(ws, "fixtures"), "abs-dir");
    await link("..", "src/up");
    await link("./real/../real/./a.js", "fixtures/dotty.js");
    const { sent, out } = await linksOf();
    expect(sent).toEqual({
      "abs-dir": "fixtures",
      "abs.js": "fixtures/real/a.js",
      "fixtures/a-link.js": "real/a.js",
      "fixtures/dotty.js": "real/a.js",
      "fixtures/linked": "real",
      "src/chain.js": "../fixtures/real/b.js",
      "src/chain2.js": "../fixtures/real/b.js",
      "src/up": "..",
    });
    expect(out).toBeNull();
  });

  it("regression: tj/commander.js's linked fixtures (pmlink -> ./pm; another-dir/pm -> ../other-dir/pm -> ../pm) go in, ending on the real pm", async () => {
    await fs.mkdir(path.join(ws, "tests/fixtures/other-dir"), { recursive: true });
    await fs.mkdir(path.join(ws, "tests/fixtures/another-dir"));
    await fs.writeFile(path.join(ws, "tests/fixtures/pm"), "#!/usr/bin/env node\n", { mode: 0o755 });
    await link("./pm", "tests/fixtures/pmlink");
    await link("../pm", "tests/fixtures/other-dir/pm");
    await link("../other-dir/pm", "tests/fixtures/another-dir/pm");
    const { sent, out } = await linksOf();
    expect(sent).toEqual({ "tests/fixtures/another-dir/pm": "../pm", "tests/fixtures/other-dir/pm": "../pm", "tests/fixtures/pmlink": "pm" });
    expect(out).toBeNull();
  });

  it("never enters a linked folder: what lies beneath a link is only reachable through it", async () => {
    await link("real", "fixtures/linked");
    const l = await listExport(ws, SPEC);
    expect(l.entries.map((e) => e.rel).filter((r) => r.startsWith("fixtures/linked"))).toEqual(["fixtures/linked"]);
  });

  it("leaves out links that point outside, dangle, loop, reach forbidden files or .git, or pass through them, counted by reason", async () => {
    await link(path.join(root, "outside.txt"), "abs-outside");
    await link("../outside.txt", "rel-outside");
    await link("../../outside.txt", "src/rel-outside2");
    await link("../ws/fixtures/real/a.js", "via-parent"); // inside in the end, but the hop leaves the workspace first
    await link("missing.js", "src/dangling");
    await link("index.js/x", "src/through-file");
    await link("loop-b", "loop-a");
    await link("loop-a", "loop-b");
    await link(".env", "env-link");
    await link("private/answers.json", "answers");
    await link("private", "private-dir");
    await link("private/../src/index.js", "through-private");
    await link(".git/config", "git-config");
    await link(".git", "git-dir");
    await link(".git/../src/index.js", "through-git");
    await link("node_modules/dep/index.js", "into-layer");
    const { sent, out } = await linksOf({ ...SPEC, layers: [{ folder: "node_modules", key: "a".repeat(64), volume: "mini-agent-layer-abcdef01" }] });
    expect(sent).toEqual({});
    expect(out).toEqual({
      count: 16,
      by_reason: { outside: 4, dangling: 2, loop: 2, not_exported: 8 },
      paths: [
        { path: "abs-outside", reason: "outside" },
        { path: "answers", reason: "not_exported" },
        { path: "env-link", reason: "not_exported" },
        { path: "git-config", reason: "not_exported" },
        { path: "git-dir", reason: "not_exported" },
        { path: "into-layer", reason: "not_exported" },
        { path: "loop-a", reason: "loop" },
        { path: "loop-b", reason: "loop" },
        { path: "private-dir", reason: "not_exported" },
        { path: "rel-outside", reason: "outside" },
        { path: "src/dangling", reason: "dangling" },
        { path: "src/rel-outside2", reason: "outside" },
        { path: "src/through-file", reason: "dangling" },
        { path: "through-git", reason: "not_exported" },
        { path: "through-private", reason: "not_exported" },
        { path: "via-parent", reason: "outside" },
      ],
    });
  });

  it("a link named by a forbidden glob stays out like a file of that name (not counted: the rule keeps its name out)", async () => {
    await link("src/index.js", ".env.local");
    await link("index.js", "private/alias.js");
    const { sent, out } = await linksOf();
    expect(sent).toEqual({});
    expect(out).toBeNull();
  });

  it("a hop through a link whose own name is forbidden is not exported, even when it ends on an exported file", async () => {
    await link("src/index.js", ".env.link");
    await link(".env.link", "alias.js");
    const { sent, out } = await linksOf();
    expect(sent).toEqual({});
    expect(out?.by_reason).toEqual({ not_exported: 1 });
  });

  it("an opted-in forbidden file may be linked to; the opt-in does not reach a link's target by itself", async () => {
    await link(".env", "env-link");
    expect((await linksOf({ ...SPEC, include: [".env"] })).sent).toEqual({ "env-link": ".env" });
    expect((await linksOf({ ...SPEC, include: ["env-link"] })).sent).toEqual({});
  });

  it("an opt-in never lifts the rule for a link: a forbidden-named link stays out even when named", async () => {
    await link("src/index.js", ".env.link");
    const { sent, out } = await linksOf({ ...SPEC, include: [".env.link"] });
    expect(sent).toEqual({});
    expect(out).toBeNull();
  });

  it("leaves out a link whose rewritten target would be over the extractor's bound", async () => {
    let dir = "fixtures/real";
    // a deep folder, so the relative path to it from the root is long
    for (let i = 0; dir.length <= MAX_LINK_TARGET; i++) dir += `/${"d".repeat(100)}${i}`;
    await fs.mkdir(path.join(ws, dir), { recursive: true });
    await link(dir, "deep");
    const { sent, out } = await linksOf();
    expect(sent).toEqual({});
    expect(out?.by_reason).toEqual({ too_long: 1 });
  });

  it("names at most 20 left-out links but counts all", async () => {
    for (let i = 0; i < 25; i++) await link(`missing-${i}`, `d${String(i).padStart(2, "0")}`);
    const { out } = await linksOf();
    expect(out?.count).toBe(25);
    expect(out?.paths).toHaveLength(20);
    expect(out?.by_reason).toEqual({ dangling: 25 });
  });
});

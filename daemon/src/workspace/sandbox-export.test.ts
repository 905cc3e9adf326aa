import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { createForbiddenMatcher } from "./forbidden.js";
import { resolveSafePath } from "./safe-path.js";
import { createExportRule, exportVerdict, listExport, openExported } from "./sandbox-export.js";

const TASK_FORBIDDEN = ["private/**", "fixtures/answers.json"];

/** Every shape the rule must keep out, next to ordinary files it must let through. */
const FILES: Record<string, string> = {
  "src/a.js": "a",
  "tests/t.test.js": "t",
  "README.md": "r",
  ".env": "PASSWORD=hunter2",
  ".env.local": "LOCAL=1",
  ".env.test": "TEST=1",
  ".npmrc": "//registry.npmjs.org/:_authToken=npm_x",
  id_rsa: "-----BEGIN OPENSSH PRIVATE KEY-----",
  "certs/x.pem": "pem",
  "x.key": "key",
  ".ssh/config": "Host *",
  ".ssh/known_hosts": "github.com ssh-ed25519 AAAA",
  "private/notes.txt": "task-forbidden",
  "fixtures/answers.json": "{}",
  "fixtures/input.json": "{}",
  ".git/HEAD": "ref: refs/heads/main",
  ".git/config": "[remote] url=https://user:token@host",
};

let root: string;
let ws: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-export-"));
  ws = path.join(root, "ws");
  for (const [rel, content] of Object.entries(FILES)) {
    await fs.mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
    await fs.writeFile(path.join(ws, rel), content);
  }
  await fs.writeFile(path.join(root, "outside.txt"), "host secret");
  await fs.link(path.join(root, "outside.txt"), path.join(ws, "src/hardlinked.txt"));
  await fs.symlink(path.join(root, "outside.txt"), path.join(ws, "src/link.txt"));
  await fs.symlink(path.join(root), path.join(ws, "linked-dir"));
  execFileSync("mkfifo", [path.join(ws, "src/fifo")]);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const rels = (l: Awaited<ReturnType<typeof listExport>>) => l.entries.map((e) => e.rel);

describe("listExport: what may leave the host for a sandbox", () => {
  it("leaves out every forbidden shape: .env*, .npmrc, id_*, *.pem, *.key, .ssh/, task globs, hard links, symlinks, fifos, .git", async () => {
    const l = await listExport(ws, { forbidden: TASK_FORBIDDEN, include: [] });
    expect(rels(l)).toEqual(["README.md", "certs", "fixtures", "fixtures/input.json", "src", "src/a.js", "tests", "tests/t.test.js"]);
    expect(l.included).toEqual([]);
  });

  it("without the task's globs only the built-in list applies (the task's forbidden files would go in)", async () => {
    const l = await listExport(ws);
    expect(rels(l)).toContain("private/notes.txt");
    expect(rels(l)).toContain("fixtures/answers.json");
    expect(rels(l)).not.toContain(".env");
  });

  it("--sandbox-include lifts the forbidden globs for the paths it names, and only those", async () => {
    const l = await listExport(ws, { forbidden: TASK_FORBIDDEN, include: [".env.test", ".ssh/known_hosts"] });
    expect(rels(l)).toContain(".env.test");
    expect(rels(l)).toContain(".ssh/known_hosts");
    // the forbidden folder goes in as a folder only, for the opted-in path beneath it
    expect(l.entries.find((e) => e.rel === ".ssh")).toMatchObject({ type: "dir", via: "parent" });
    for (const rel of [".env", ".env.local", ".ssh/config", ".npmrc", "id_rsa"]) expect(rels(l)).not.toContain(rel);
    expect(l.included).toEqual([".env.test", ".ssh/known_hosts"]);
  });

  it("an opt-in never lets through a symlink, a hard link, a fifo or .git, even when it names them", async () => {
    const named = ["src/link.txt", "linked-dir", "src/hardlinked.txt", "src/fifo", ".git", ".git/HEAD", ".git/config"];
    const l = await listExport(ws, { forbidden: TASK_FORBIDDEN, include: [...named, ".env"] });
    for (const rel of named) expect(rels(l)).not.toContain(rel);
    expect(rels(l)).toContain(".env");
  });

  it("regression: an opt-in of `**`, `.env*` or a folder lifted every forbidden file it covered, at every depth (it lifts only the path it names)", async () => {
    // new runs cannot send a wildcard (contracts/sandbox.ts); a run recorded with one keeps resuming, lifting nothing
    const l = await listExport(ws, { forbidden: TASK_FORBIDDEN, include: ["**", "*", ".env*", ".ssh", "private", "certs"] });
    for (const rel of [".env", ".env.local", ".env.test", ".npmrc", "id_rsa", "certs/x.pem", "x.key", ".ssh/config", ".ssh/known_hosts", "private/notes.txt"]) {
      expect(rels(l)).not.toContain(rel);
    }
    expect(l.included).toEqual([".ssh", "private"]);
    expect(rels(l)).toContain("src/a.js");
  });

  it("agrees with read_file on every file: what the model may not read never goes into a sandbox (regression: the tar left out only .git)", async () => {
    const forbidden = createForbiddenMatcher(TASK_FORBIDDEN);
    const exported = new Set(rels(await listExport(ws, { forbidden: TASK_FORBIDDEN, include: [] })));
    const candidates = [...Object.keys(FILES), "src/hardlinked.txt", "src/link.txt", "src/fifo"];
    for (const rel of candidates) {
      const read = await resolveSafePath(ws, rel, { purpose: "read", forbidden });
      expect({ rel, readable: read.ok }).toEqual({ rel, readable: exported.has(rel) });
    }
  });

  it("refuses a missing workspace and a symlinked root", async () => {
    expect(isMiniAgentError(await listExport(path.join(ws, "nope")).catch((e) => e), "not_found")).toBe(true);
    expect(isMiniAgentError(await listExport(path.join(ws, "linked-dir")).catch((e) => e), "invalid_fields")).toBe(true);
  });
});

describe("exportVerdict", () => {
  const rule = createExportRule({ forbidden: TASK_FORBIDDEN, include: [".env.test"] });
  it.each([
    ["src/a.js", "file", 1, { ok: true, via: "rule" }],
    [".env.test", "file", 1, { ok: true, via: "include" }],
    [".env", "file", 1, { ok: false, reason: "forbidden" }],
    ["private/x", "file", 1, { ok: false, reason: "forbidden" }],
    ["src/a.js", "file", 2, { ok: false, reason: "hard_link" }],
    [".env.test", "file", 2, { ok: false, reason: "hard_link" }],
    ["src/l", "symlink", 1, { ok: false, reason: "symlink" }],
    ["src/f", "other", 1, { ok: false, reason: "special" }],
    ["sub/.git/config", "file", 1, { ok: false, reason: "repository_metadata" }],
  ] as const)("%s (%s, nlink %d)", (rel, type, nlink, want) => {
    expect(exportVerdict(rule, rel, type, nlink)).toEqual(want);
  });
});

describe("openExported", () => {
  it("refuses a file that became a hard link after the walk (its other name may be outside)", async () => {
    const l = await listExport(ws);
    const entry = l.entries.find((e) => e.rel === "src/a.js")!;
    await fs.link(path.join(ws, "src/a.js"), path.join(root, "elsewhere.js"));
    expect(isMiniAgentError(await openExported(entry).catch((e) => e), "sandbox_error")).toBe(true);
  });

  it("refuses a file swapped for a symlink after the walk (never followed)", async () => {
    const l = await listExport(ws);
    const entry = l.entries.find((e) => e.rel === "src/a.js")!;
    await fs.rm(path.join(ws, "src/a.js"));
    await fs.symlink(path.join(root, "outside.txt"), path.join(ws, "src/a.js"));
    expect(isMiniAgentError(await openExported(entry).catch((e) => e), "sandbox_error")).toBe(true);
  });
});

describe("listExport with an overlay (a task's hidden tests, laid over in the Verifier's sandboxes)", () => {
  let overlay: string;
  beforeEach(async () => {
    overlay = path.join(root, "control", "hidden_tests");
    await fs.mkdir(path.join(overlay, "tests", "deep"), { recursive: true });
    await fs.writeFile(path.join(overlay, "tests", "t.test.js"), "hidden version");
    await fs.writeFile(path.join(overlay, "tests", "deep", "new.test.js"), "new hidden test");
  });

  it("adds the overlay's files and replaces the workspace's file at the same path, folders before what they hold", async () => {
    const l = await listExport(ws, { forbidden: TASK_FORBIDDEN, include: [], overlay });
    expect(rels(l)).toEqual([
      "README.md",
      "certs",
      "fixtures",
      "fixtures/input.json",
      "src",
      "src/a.js",
      "tests",
      "tests/deep",
      "tests/deep/new.test.js",
      "tests/t.test.js",
    ]);
    const replaced = l.entries.find((e) => e.rel === "tests/t.test.js")!;
    expect(replaced).toMatchObject({ via: "overlay", abs: path.join(overlay, "tests", "t.test.js") });
    // the workspace itself is untouched: the overlay is only in what is sent
    expect(await fs.readFile(path.join(ws, "tests", "t.test.js"), "utf8")).toBe("t");
  });

  it.each([
    ["a symlink", async () => fs.symlink(path.join(root, "outside.txt"), path.join(overlay, "tests", "l.test.js"))],
    ["a hard link", async () => fs.link(path.join(root, "outside.txt"), path.join(overlay, "tests", "h.test.js"))],
    ["a fifo", async () => execFileSync("mkfifo", [path.join(overlay, "tests", "f")])],
    ["a folder where the workspace has a file", async () => fs.mkdir(path.join(overlay, "README.md"))],
  ])("refuses an overlay holding %s, sending nothing", async (_what, make) => {
    await make();
    const err = await listExport(ws, { forbidden: [], include: [], overlay }).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "path_denied")).toBe(true);
  });

  it("refuses an overlay folder that is itself a symlink (never followed)", async () => {
    const link = path.join(root, "control", "linked");
    await fs.symlink(overlay, link);
    expect(isMiniAgentError(await listExport(ws, { forbidden: [], include: [], overlay: link }).catch((e: unknown) => e), "path_denied")).toBe(true);
  });
});

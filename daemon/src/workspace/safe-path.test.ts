import fs from "node:fs/promises";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { tempRun, type TempRun } from "../tools/workspace.testkit.js";
import { createForbiddenMatcher } from "./forbidden.js";
import { normalizeRel, resolveSafePath } from "./safe-path.js";

const forbidden = createForbiddenMatcher(["secrets/**"]);
let run: TempRun;
afterEach(async () => run?.cleanup());

describe("normalizeRel", () => {
  it.each([
    ["../outside", "'..'"],
    ["src/../../x", "'..'"],
    ["/etc/passwd", "relative"],
    ["C:/x", "relative"],
    ["~/x", "relative"],
    ["a\u0000b", "NUL"],
    ["a\\b", "backslash"],
    ["CON", "reserved"],
    ["src/nul.txt", "reserved"],
    ["com1.js", "reserved"],
    ["lpt9", "reserved"],
    ["a/b.", "ends with"],
    ["src/a:stream", "':'"],
    ["", "non-empty"],
    ["./", "root"],
  ])("refuses %j", (input, why) => {
    const r = normalizeRel(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(why);
  });

  it("drops '.' segments and doubled slashes into one spelling", () => {
    expect(normalizeRel("./src//a.js")).toEqual({ ok: true, rel: "src/a.js" });
    expect(normalizeRel("console.js")).toEqual({ ok: true, rel: "console.js" });
  });
});

describe("resolveSafePath on a real tree", () => {
  it("../outside is path_denied even when the outside file exists", async () => {
    run = await tempRun({ "src/a.js": "x" });
    await fs.writeFile(path.join(run.tmp, "outside"), "secret");
    const r = await resolveSafePath(run.ws, "../outside", { purpose: "read", forbidden });
    expect(r).toMatchObject({ ok: false, code: "path_denied" });
  });

  it("resolves a plain file and a missing one", async () => {
    run = await tempRun({ "src/a.js": "x" });
    expect(await resolveSafePath(run.ws, "src/a.js", { purpose: "read", forbidden })).toMatchObject({ ok: true, rel: "src/a.js", kind: "file" });
    expect(await resolveSafePath(run.ws, "src/b.js", { purpose: "read", forbidden })).toMatchObject({ ok: false, code: "not_found" });
    expect(await resolveSafePath(run.ws, "src/new/b.js", { purpose: "create", forbidden })).toMatchObject({ ok: true, kind: "absent" });
  });

  it("refuses a symlinked FILE whose target is outside the workspace", async () => {
    run = await tempRun({ "src/a.js": "x" });
    await fs.writeFile(path.join(run.tmp, "outside"), "secret");
    await fs.symlink(path.join(run.tmp, "outside"), path.join(run.ws, "src/link.js"));
    for (const purpose of ["read", "write", "create"] as const) {
      expect(await resolveSafePath(run.ws, "src/link.js", { purpose, forbidden })).toMatchObject({ ok: false, code: "path_denied" });
    }
  });

  it("refuses a symlinked FOLDER anywhere on the path, even one pointing inside", async () => {
    run = await tempRun({ "src/a.js": "x" });
    await fs.symlink(path.join(run.ws, "src"), path.join(run.ws, "alias"));
    const r = await resolveSafePath(run.ws, "alias/a.js", { purpose: "read", forbidden });
    expect(r).toMatchObject({ ok: false, code: "path_denied" });
    // creating beneath a symlinked folder is refused too
    expect(await resolveSafePath(run.ws, "alias/new.js", { purpose: "create", forbidden })).toMatchObject({ ok: false, code: "path_denied" });
  });

  it("refuses a hard-linked file (the other name may be outside)", async () => {
    run = await tempRun({ "src/a.js": "x" });
    await fs.writeFile(path.join(run.tmp, "outside"), "secret");
    await fs.link(path.join(run.tmp, "outside"), path.join(run.ws, "src/hard.js"));
    const r = await resolveSafePath(run.ws, "src/hard.js", { purpose: "read", forbidden });
    expect(r).toMatchObject({ ok: false, code: "path_denied" });
    if (!r.ok) expect(r.message).toContain("hard-linked");
  });

  it("refuses a fifo", async () => {
    run = await tempRun({});
    execFileSync("mkfifo", [path.join(run.ws, "pipe")]);
    expect(await resolveSafePath(run.ws, "pipe", { purpose: "read", forbidden })).toMatchObject({ ok: false, code: "path_denied" });
  });

  it.each([
    ".git/config",
    ".git",
    "sub/.git/HEAD",
    ".env",
    ".env.local",
    "deploy/server.pem",
    "tls.key",
    "home/id_rsa",
    ".ssh/known_hosts",
    "secrets/token.txt",
    ".ENV",
  ])("forbids %s (built-in list plus the task's extra globs)", async (rel) => {
    run = await tempRun({});
    const r = await resolveSafePath(run.ws, rel, { purpose: "create", forbidden });
    expect(r).toMatchObject({ ok: false, code: "path_denied" });
  });

  it("refuses the control dir when it sits inside the workspace", async () => {
    run = await tempRun({ "state/ctl/baseline/x": "y" });
    const r = await resolveSafePath(run.ws, "state/ctl/baseline/x", { purpose: "read", forbidden, controlDir: path.join(run.ws, "state/ctl") });
    expect(r).toMatchObject({ ok: false, code: "path_denied" });
  });
});

describe("readNoFollow", () => {
  it("refuses a descriptor that is not the checked path (a parent swapped for a symlink after the check)", async () => {
    const { readNoFollow } = await import("./read.js");
    run = await tempRun({ "src/a.js": "x" });
    const real = await fs.realpath(run.ws);
    // what resolveSafePath approved: <root>/alias/a.js, while alias is (now) a symlink to src
    await fs.symlink(path.join(real, "src"), path.join(real, "alias"));
    expect(await readNoFollow(path.join(real, "alias/a.js"), { verifyPath: true })).toMatchObject({ ok: false, reason: "moved" });
    expect(await readNoFollow(path.join(real, "src/a.js"), { verifyPath: true })).toMatchObject({ ok: true });
  });

  it("never follows a symlink as the last component", async () => {
    const { readNoFollow } = await import("./read.js");
    run = await tempRun({ "a.txt": "a" });
    await fs.symlink(path.join(run.ws, "a.txt"), path.join(run.ws, "link"));
    expect(await readNoFollow(path.join(run.ws, "link"))).toMatchObject({ ok: false, reason: "symlink" });
  });
});

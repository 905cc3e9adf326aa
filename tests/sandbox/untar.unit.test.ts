import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import tarStream from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listExport } from "../../daemon/src/workspace/index.js";
import { packExport } from "../../daemon/src/sandbox/workspace-tar.js";
import { rawTarHeader } from "../kit/raw-tar.js";

/**
 * The sandbox's own tar extractor (sandbox-image/helper/untar.h), compiled on
 * the host into its test driver (untar-check.c) and fed crafted archives: what
 * the host's packer writes goes in whole; every entry the sandbox must never
 * take is refused with PUT_REFUSED and nothing of it is written.
 */
const REPO = path.resolve(import.meta.dirname, "../..");
const PUT_REFUSED = 30;
let tmp: string;
let bin: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-untar-"));
  bin = path.join(tmp, "untar-check");
  const cc = spawnSync("gcc", ["-O2", "-Wall", "-Werror", "-o", bin, path.join(REPO, "sandbox-image/helper/untar-check.c")], { encoding: "utf8" });
  if (cc.status !== 0) throw new Error(`gcc failed: ${cc.stderr}`);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function newRoot(): string {
  return fs.mkdtempSync(path.join(tmp, "root-"));
}

function extract(root: string, archive: Buffer): { status: number | null; stderr: string } {
  const r = spawnSync(bin, [root], { input: archive, encoding: "utf8" });
  return { status: r.status, stderr: r.stderr };
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) parts.push(c);
  return Buffer.concat(parts);
}

type Entry = Partial<tarStream.Header> & { name: string; body?: string };
async function tarOf(entries: Entry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const done = collect(pack as unknown as NodeJS.ReadableStream);
  for (const { body, ...h } of entries) {
    await new Promise<void>((resolve, reject) => pack.entry({ mtime: new Date(0), ...h }, body ?? "", (e) => (e ? reject(e) : resolve())));
  }
  pack.finalize();
  return done;
}

function treeOf(root: string): Array<[string, string, number, number, string]> {
  const out: Array<[string, string, number, number, string]> = [];
  for (const rel of (fs.readdirSync(root, { recursive: true }) as string[]).sort()) {
    const st = fs.lstatSync(path.join(root, rel));
    const body = st.isFile() ? fs.readFileSync(path.join(root, rel)).toString("base64") : "";
    out.push([rel, st.isDirectory() ? "dir" : st.isFile() ? "file" : "other", st.mode & 0o7777, Math.floor(st.mtimeMs / 1000), body]);
  }
  return out;
}

describe("untar (the sandbox's workspace extractor)", () => {
  it("takes the host packer's archive whole: nested folders, modes, empty and large files, long unicode names, mtimes", async () => {
    const src = newRoot();
    fs.mkdirSync(path.join(src, "a/b/c"), { recursive: true });
    fs.writeFileSync(path.join(src, "a/b/c/deep.txt"), "deep\n");
    fs.writeFileSync(path.join(src, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    fs.writeFileSync(path.join(src, "empty"), "");
    fs.writeFileSync(path.join(src, "big.bin"), Buffer.alloc(3 * 1024 * 1024 + 17, 7));
    const long = `${"ü".repeat(60)}/${"日本".repeat(30)}.txt`;
    fs.mkdirSync(path.join(src, path.dirname(long)));
    fs.writeFileSync(path.join(src, long), "unicode");
    fs.utimesSync(path.join(src, "a/b"), 1_000_000, 1_000_000);
    const list = await listExport(src, undefined);
    const dest = newRoot();
    const r = extract(dest, await collect(packExport(list.entries)));
    expect(r).toEqual({ status: 0, stderr: "" });
    // what the packer decided (sandboxMode: owner rw(x), nothing setuid) is what lands
    const got = treeOf(dest);
    expect(got.map(([rel]) => rel)).toEqual(list.entries.map((e) => e.rel).sort());
    const want = list.entries.map((e) => [
      e.rel,
      (Number(e.stat.mode) & 0o755) | (e.type === "dir" ? 0o700 : 0o600),
      Math.floor(Number(e.stat.mtimeMs) / 1000),
    ]);
    expect(got.map(([rel, , mode, mtime]) => [rel, mode, mtime]).sort()).toEqual(want.sort());
    for (const [rel, type, , , body] of got) if (type === "file") expect(body).toBe(fs.readFileSync(path.join(src, rel)).toString("base64"));
  });

  const hostile: Array<[string, () => Promise<Buffer>, RegExp]> = [
    ["an absolute path", () => tarOf([{ name: "/etc/evil", body: "x" }]), /absolute path/],
    ["a .. component", () => tarOf([{ name: "a/../../evil", body: "x" }]), /component/],
    ["a symlink to an absolute target", () => tarOf([{ name: "ln", type: "symlink", linkname: "/etc/passwd" }]), /absolute target/],
    ["a symlink whose .. leaves the root", () => tarOf([{ name: "ln", type: "symlink", linkname: ".." }]), /leaves the workspace/],
    ["a nested symlink whose .. leaves the root", () => tarOf([{ name: "ln", type: "symlink", linkname: "../../etc/passwd" }]), /leaves the workspace/],
    ["a symlink with .. after a name", () => tarOf([{ name: "ln", type: "symlink", linkname: "x/../y" }]), /after a name/],
    ["a symlink with an empty component", () => tarOf([{ name: "ln", type: "symlink", linkname: "x//y" }]), /empty or "\." component/],
    ["a symlink with a . component", () => tarOf([{ name: "ln", type: "symlink", linkname: "./y" }]), /empty or "\." component/],
    ["a symlink target over 1024 bytes", () => tarOf([{ name: "ln", type: "symlink", linkname: "x".repeat(1025) }]), /pax linkpath too long/],
    ["a symlink with an empty target", async () => Buffer.concat([rawTarHeader("ln", "00000000000 ", { type: "2" }), Buffer.alloc(1024)]), /empty target/],
    ["a hard link", () => tarOf([{ name: "hl", type: "link", linkname: "/etc/passwd" }]), /entry type '1'/],
    ["a character device", () => tarOf([{ name: "dev", type: "character-device", devmajor: 1, devminor: 3 }]), /entry type '3'/],
    ["a fifo", () => tarOf([{ name: "fifo", type: "fifo" }]), /entry type '6'/],
    ["a setuid file", () => tarOf([{ name: "suid", mode: 0o4755, body: "x" }]), /setuid/],
    ["a setgid folder", () => tarOf([{ name: "sgid", type: "directory", mode: 0o2755 }]), /setuid/],
    ["a pax key other than path and linkpath", () => tarOf([{ name: "p", body: "x", pax: { comment: "hi" } }]), /pax key comment/],
    [
      "a GNU long name",
      async () => Buffer.concat([rawTarHeader("././@LongLink", Buffer.from("00000000010 "), { type: "L" }), Buffer.alloc(1536)]),
      /entry type 'L'/,
    ],
    ["a base-256 size", async () => Buffer.concat([rawTarHeader("big", Buffer.from([0x80, ...Buffer.alloc(10), 1]))]), /base-256/],
    [
      "a bad checksum",
      async () => {
        const t = await tarOf([{ name: "f", body: "x" }]);
        t[0] = "g".charCodeAt(0);
        return t;
      },
      /checksum/,
    ],
    ["a truncated archive", async () => (await tarOf([{ name: "f", body: "x".repeat(2000) }])).subarray(0, 1024), /ended inside/],
    [
      "a second copy of a file",
      () =>
        tarOf([
          { name: "f", body: "1" },
          { name: "f", body: "2" },
        ]),
      /cannot create f \(File exists\)/,
    ],
  ];
  for (const [what, make, reason] of hostile) {
    it(`refuses ${what} and writes nothing of it`, async () => {
      const root = newRoot();
      const r = extract(root, await make());
      expect(r.status).toBe(PUT_REFUSED);
      expect(r.stderr).toMatch(reason);
      // nothing but what came before the refusal (only the duplicate case has a first copy)
      expect(fs.readdirSync(root)).toEqual(what.startsWith("a second") ? ["f"] : []);
      if (what.startsWith("a second")) expect(fs.readFileSync(path.join(root, "f"), "utf8")).toBe("1");
    });
  }

  it("never follows a symlink already under the root to write outside it", async () => {
    const root = newRoot();
    const outside = newRoot();
    fs.symlinkSync(outside, path.join(root, "escape"));
    const r = extract(root, await tarOf([{ name: "escape/evil", body: "x" }]));
    expect(r.status).toBe(PUT_REFUSED);
    expect(r.stderr).toMatch(/parent of escape\/evil is not a directory/);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("makes a relative symlink inside the root: files, folders, nested, '.', long targets (pax linkpath) and the root itself", async () => {
    const root = newRoot();
    const long = `${"d".repeat(200)}/${"f".repeat(200)}`;
    const r = extract(
      root,
      await tarOf([
        { name: "a", type: "directory" },
        { name: "a/b", type: "directory" },
        { name: "a/b/up", type: "symlink", linkname: "../../c.txt" },
        { name: "a/here", type: "symlink", linkname: "." },
        { name: "a/top", type: "symlink", linkname: ".." },
        { name: "c.txt", body: "linked\n" },
        { name: "dir-link", type: "symlink", linkname: "a/b" },
        { name: "d".repeat(200), type: "directory" },
        { name: long, body: "far" },
        { name: "far", type: "symlink", linkname: long },
      ]),
    );
    expect(r).toEqual({ status: 0, stderr: "" });
    expect(fs.readlinkSync(path.join(root, "a/b/up"))).toBe("../../c.txt");
    expect(fs.readFileSync(path.join(root, "a/b/up"), "utf8")).toBe("linked\n");
    expect(fs.readlinkSync(path.join(root, "dir-link"))).toBe("a/b");
    expect(fs.readdirSync(path.join(root, "dir-link"))).toEqual(["up"]);
    expect(fs.readlinkSync(path.join(root, "a/here"))).toBe(".");
    expect(fs.realpathSync(path.join(root, "a/top"))).toBe(fs.realpathSync(root));
    expect(fs.readFileSync(path.join(root, "far"), "utf8")).toBe("far");
  });

  // link-then-write: an archive that makes a link and then writes THROUGH it must never write where the link points
  const throughLinks: Array<[string, Entry[], RegExp]> = [
    [
      "a file beneath a link to a folder",
      [
        { name: "d", type: "directory" },
        { name: "l", type: "symlink", linkname: "d" },
        { name: "l/evil", body: "x" },
      ],
      /parent of l\/evil is not a directory/,
    ],
    [
      "a folder beneath a link to the root",
      [
        { name: "l", type: "symlink", linkname: "." },
        { name: "l/sub", type: "directory" },
      ],
      /parent of l\/sub is not a directory/,
    ],
    [
      "a file over a link",
      [
        { name: "d", type: "directory" },
        { name: "l", type: "symlink", linkname: "d" },
        { name: "l", body: "x" },
      ],
      /cannot create l \(File exists\)/,
    ],
    [
      "a folder over a link",
      [
        { name: "d", type: "directory" },
        { name: "l", type: "symlink", linkname: "d" },
        { name: "l", type: "directory" },
      ],
      /cannot make directory l/,
    ],
    [
      "a second link over a link",
      [
        { name: "l", type: "symlink", linkname: "d" },
        { name: "l", type: "symlink", linkname: "e" },
      ],
      /cannot make symlink l \(File exists\)/,
    ],
    [
      "a link over a file",
      [
        { name: "f", body: "1" },
        { name: "f", type: "symlink", linkname: "g" },
      ],
      /cannot make symlink f \(File exists\)/,
    ],
    // lexically "a/up/.." is "a", but a/up is a link to the root: the kernel would resolve it to the root's parent
    [
      "a chain whose text stays inside but whose resolution leaves",
      [
        { name: "a", type: "directory" },
        { name: "a/up", type: "symlink", linkname: ".." },
        { name: "esc", type: "symlink", linkname: "a/up/.." },
      ],
      /esc: target with ".." after a name/,
    ],
  ];
  for (const [what, entries, reason] of throughLinks) {
    it(`refuses ${what}, and writes nothing through the link`, async () => {
      const root = newRoot();
      const r = extract(root, await tarOf(entries));
      expect(r.status).toBe(PUT_REFUSED);
      expect(r.stderr).toMatch(reason);
      if (fs.existsSync(path.join(root, "d"))) expect(fs.readdirSync(path.join(root, "d"))).toEqual([]);
      if (fs.existsSync(path.join(root, "f"))) expect(fs.readFileSync(path.join(root, "f"), "utf8")).toBe("1");
    });
  }

  it("takes the host packer's links: a chain and an absolute-but-inside target arrive as direct relative links that resolve as on the host", async () => {
    const src = newRoot();
    fs.mkdirSync(path.join(src, "fixtures/real"), { recursive: true });
    fs.writeFileSync(path.join(src, "fixtures/real/a.js"), "module.exports = 1;\n");
    fs.symlinkSync("real", path.join(src, "fixtures/linked"));
    fs.symlinkSync("../fixtures/linked/a.js", path.join(src, "fixtures/chain.js"));
    fs.symlinkSync(path.join(src, "fixtures/real/a.js"), path.join(src, "abs.js"));
    const list = await listExport(src, undefined);
    const dest = newRoot();
    expect(extract(dest, await collect(packExport(list.entries)))).toEqual({ status: 0, stderr: "" });
    expect(fs.readlinkSync(path.join(dest, "fixtures/linked"))).toBe("real");
    expect(fs.readlinkSync(path.join(dest, "fixtures/chain.js"))).toBe("real/a.js");
    expect(fs.readlinkSync(path.join(dest, "abs.js"))).toBe("fixtures/real/a.js");
    for (const rel of ["fixtures/linked/a.js", "fixtures/chain.js", "abs.js"])
      expect(fs.readFileSync(path.join(dest, rel), "utf8")).toBe("module.exports = 1;\n");
  });
});

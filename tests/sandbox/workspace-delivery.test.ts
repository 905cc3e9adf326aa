import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { IN_IMAGE } from "../../daemon/src/sandbox/host-config.js";
import type { SandboxContainer } from "../../daemon/src/sandbox/sandbox-container.js";
import { packExport } from "../../daemon/src/sandbox/workspace-tar.js";
import { listExport } from "../../daemon/src/workspace/index.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { availableRuntimes, freshStateDir, removeWithPrefix, runIdPrefix } from "./helpers.js";
import tarStream from "tar-stream";
import { rawTarHeader } from "../kit/raw-tar.js";

/**
 * The workspace goes into a sandbox over its command channel and is extracted
 * by the spawner as the sandbox user (SandboxContainer.putWorkspace), where
 * the engine's putArchive extracted it as root. On the real engine: both give
 * the very same tree (names, types, modes, owners, sizes, mtimes, bytes), and
 * what the extractor must refuse is refused inside a real sandbox.
 */
const prefix = runIdPrefix("delivery");
let env: Awaited<ReturnType<typeof freshStateDir>>;
let ws: string;

/** in-sandbox: every entry under /workspace (the root included) with what the comparison covers */
const LIST_TREE = `
const fs = require("fs"), crypto = require("crypto"), path = require("path");
const out = [];
const walk = (rel) => {
  const abs = path.join("/workspace", rel);
  const st = fs.lstatSync(abs);
  const kind = st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other";
  const sha = kind === "file" ? crypto.createHash("sha256").update(fs.readFileSync(abs)).digest("hex") : kind === "link" ? fs.readlinkSync(abs) : "";
  // the root's mtime is when its last child was made (the copy's time), in both ways alike
  out.push([rel || ".", kind, (st.mode & 0o7777).toString(8), st.uid, st.gid, kind === "file" ? st.size : 0, rel ? Math.floor(st.mtimeMs / 1000) : null, sha]);
  if (kind === "dir") for (const n of fs.readdirSync(abs).sort()) walk(rel ? rel + "/" + n : n);
};
walk("");
console.log(JSON.stringify(out));`;

beforeAll(async () => {
  env = await freshStateDir();
  ws = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-delivery-ws-"));
  fs.mkdirSync(path.join(ws, "src/deep/er"), { recursive: true });
  fs.writeFileSync(path.join(ws, "src/deep/er/leaf.js"), "module.exports = 1;\n");
  fs.writeFileSync(path.join(ws, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  fs.writeFileSync(path.join(ws, "empty.txt"), "");
  fs.writeFileSync(path.join(ws, "read-only.txt"), "ro", { mode: 0o444 });
  fs.writeFileSync(path.join(ws, "large.bin"), Buffer.from(Array.from({ length: 5 * 1024 * 1024 + 3 }, (_, i) => (i * 31) & 0xff)));
  const unicode = `données-${"é".repeat(70)}/テスト-${"名前".repeat(40)}.txt`;
  fs.mkdirSync(path.join(ws, path.dirname(unicode)));
  fs.writeFileSync(path.join(ws, unicode), "ünïcödé\n");
  // links the export rule lets in (inside, to exported entries), rewritten relative; and one it keeps out
  fs.symlinkSync("deep/er/leaf.js", path.join(ws, "src/leaf-link.js"));
  fs.symlinkSync("src/deep", path.join(ws, "deep-link"));
  fs.symlinkSync(path.join(ws, "run.sh"), path.join(ws, "src/abs-link"));
  fs.symlinkSync("/etc/passwd", path.join(ws, "outside-link"));
  fs.utimesSync(path.join(ws, "src/deep"), 1_500_000_000, 1_500_000_000);
  fs.utimesSync(path.join(ws, "empty.txt"), 1_600_000_000, 1_600_000_000);
}, 600_000);
afterAll(async () => {
  await removeWithPrefix(prefix);
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(env.stateDir, { recursive: true, force: true });
});

const runtimes = await availableRuntimes();

async function tarOf(entries: Array<Partial<tarStream.Header> & { name: string; body?: string }>): Promise<Buffer> {
  const pack = tarStream.pack();
  const parts: Buffer[] = [];
  pack.on("data", (c: unknown) => void parts.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => pack.on("end", resolve).on("error", reject));
  for (const { body, ...h } of entries) {
    await new Promise<void>((resolve, reject) => pack.entry({ mtime: new Date(0), ...h }, body ?? "", (e) => (e ? reject(e) : resolve())));
  }
  pack.finalize();
  await done;
  return Buffer.concat(parts);
}

describe.each(runtimes)("workspace delivery on %s", (runtime) => {
  const executor = () => new DockerExecutor({ lockPath: env.lockPath, config: { runtime } });
  const treeIn = async (box: SandboxContainer): Promise<unknown[]> => {
    const out = await box.run({ argv: ["node", "-e", LIST_TREE], env: [], timeoutMs: 60_000, capBytes: 1 << 20, onStop: () => box.kill() });
    expect(out.exitCode, out.stderr).toBe(0);
    return JSON.parse(out.stdout) as unknown[];
  };

  it("the channel's extraction gives exactly the tree putArchive gave: folders, modes, owners, empty, large and unicode-named files, mtimes", async () => {
    const ex = executor();
    const list = await listExport(ws, undefined);
    const viaEngine = await ex.startFresh(`${prefix}-engine`, "probe", false);
    const viaChannel = await ex.startFresh(`${prefix}-channel`, "probe", false);
    try {
      await viaEngine.putArchive(packExport(list.entries), IN_IMAGE.workspace);
      await viaChannel.putWorkspace(packExport(list.entries), 60_000);
      const [a, b] = [await treeIn(viaEngine), await treeIn(viaChannel)];
      expect(b).toEqual(a);
      // and the comparison saw what it is meant to see
      expect(a.length).toBe(list.entries.length + 1);
      expect(a).toContainEqual(["run.sh", "file", "755", 65534, 65534, 18, expect.any(Number), expect.any(String)]);
      expect(a).toContainEqual(["read-only.txt", "file", "644", 65534, 65534, 2, expect.any(Number), expect.any(String)]);
      expect(a).toContainEqual(["empty.txt", "file", "644", 65534, 65534, 0, 1_600_000_000, expect.any(String)]);
      expect(a).toContainEqual(["src/deep", "dir", "755", 65534, 65534, 0, 1_500_000_000, ""]);
      expect(a).toContainEqual(["src/leaf-link.js", "link", "777", 65534, 65534, 0, expect.any(Number), "deep/er/leaf.js"]);
      expect(a).toContainEqual(["deep-link", "link", "777", 65534, 65534, 0, expect.any(Number), "src/deep"]);
      expect(a).toContainEqual(["src/abs-link", "link", "777", 65534, 65534, 0, expect.any(Number), "../run.sh"]);
      expect(JSON.stringify(a)).not.toContain("outside-link");
    } finally {
      await viaEngine.remove();
      await viaChannel.remove();
    }
  }, 300_000);

  const refused = async (tar: Buffer): Promise<unknown> => {
    const box = await executor().startFresh(`${prefix}-hostile`, "probe", false);
    try {
      return await box.putWorkspace(Readable.from([tar]), 60_000).then(
        () => null,
        (err: unknown) => err,
      );
    } finally {
      await box.remove();
    }
  };

  it("a file larger than the sandbox's /workspace is refused by the extractor before any byte of it is written", async () => {
    // a header alone: the extractor decides on it and never reads the 1 GiB body the host would send
    const h = rawTarHeader("huge.bin", "10000000000 ", { mode: "0000600", uid: "0177777", gid: "0177777" });
    const err = await refused(h);
    expect(isMiniAgentError(err) && err.code).toBe("sandbox_error");
    expect((err as Error).message).toMatch(/huge\.bin \(1073741824 bytes\) is larger than the space left in the sandbox/);
  }, 120_000);

  // link-then-write: an archive that makes a link and then writes THROUGH it. On gVisor, openat(O_DIRECTORY|O_NOFOLLOW)
  // follows a link, and the extractor wrote d/evil through l before it checked the entry by lstat (untar.h open_dir_nofollow)
  const throughLinks: Array<[string, Array<Partial<tarStream.Header> & { name: string; body?: string }>, RegExp]> = [
    [
      "a file beneath a link to a folder",
      [
        { name: "d", type: "directory" },
        { name: "l", type: "symlink", linkname: "d" },
        { name: "l/evil", body: "x" },
      ],
      /parent of l\/evil is not a directory here \(Too many levels of symbolic links\)/,
    ],
    [
      "a file over a dangling link",
      [
        { name: "d", type: "directory" },
        { name: "l", type: "symlink", linkname: "d/evil" },
        { name: "l", body: "x" },
      ],
      /cannot create l \(File exists\)/,
    ],
  ];
  for (const [what, entries, reason] of throughLinks) {
    it(`link-then-write: ${what} is refused inside the sandbox, and nothing is written through the link`, async () => {
      const box = await executor().startFresh(`${prefix}-through-link`, "probe", false);
      try {
        const err = await box.putWorkspace(Readable.from([await tarOf(entries)]), 60_000).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isMiniAgentError(err) && err.code).toBe("sandbox_error");
        // refused at that entry, before anything of it was made (a refused sandbox takes no further command)
        expect((err as Error).message).toMatch(reason);
      } finally {
        await box.remove();
      }
    }, 120_000);
  }

  it("a tar entry leaving /workspace (..) is refused inside the sandbox with the reason", async () => {
    const h = rawTarHeader("../tmp/evil", "00000000000 ", { mode: "0000600", uid: "0000000", gid: "0000000" });
    const err = await refused(Buffer.concat([h, Buffer.alloc(1024)]));
    expect(isMiniAgentError(err) && err.code).toBe("sandbox_error");
    expect((err as Error).message).toMatch(/"\.\." component refused: \.\.\/tmp\/evil/);
  }, 120_000);
});

import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import tarStream from "tar-stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { listExport } from "../workspace/index.js";
import { notifyIncluded, packExport } from "./workspace-tar.js";

interface Unpacked {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  body: string;
}

/** Reads a tar stream back entry by entry (what the engine would extract into /workspace). */
async function unpack(stream: NodeJS.ReadableStream): Promise<Unpacked[]> {
  const out: Unpacked[] = [];
  const extract = tarStream.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (h, body, next) => {
      const chunks: Buffer[] = [];
      body.on("data", (c: unknown) => chunks.push(c as Buffer));
      body.on("end", () => {
        out.push({
          name: h.name.replace(/\/$/, ""),
          type: h.type ?? "",
          mode: h.mode ?? 0,
          uid: h.uid ?? -1,
          gid: h.gid ?? -1,
          body: Buffer.concat(chunks).toString(),
        });
        next();
      });
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
    stream.on("error", reject);
  });
  stream.pipe(extract as unknown as NodeJS.WritableStream);
  await done;
  return out;
}

let root: string;
let ws: string;
const BIG = "x".repeat(700 * 1024);
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-tar-"));
  ws = path.join(root, "ws");
  const files: Record<string, string> = {
    "src/a.js": "export const a = 1;\n",
    "src/big.bin": BIG,
    "tests/t.test.js": "test",
    "empty.txt": "",
    ".env": "PASSWORD=hunter2",
    ".env.test": "TEST_ONLY=1",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm_secret",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "secrets/x.pem": "pem",
    "answers/hidden.json": "{}",
    ".git/config": "[remote]",
  };
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
    await fs.writeFile(path.join(ws, rel), content);
  }
  await fs.chmod(path.join(ws, "src/a.js"), 0o4755);
  await fs.writeFile(path.join(root, "outside.txt"), "host secret");
  await fs.link(path.join(root, "outside.txt"), path.join(ws, "src/hard.txt"));
  await fs.symlink(path.join(root, "outside.txt"), path.join(ws, "src/soft.txt"));
  execFileSync("mkfifo", [path.join(ws, "src/fifo")]);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const SPEC = { forbidden: ["answers/**"], include: [] };

describe("packExport", () => {
  it("regression: the full tar holds only exported entries, never .env, .npmrc, keys, task-forbidden files, links or fifos", async () => {
    const list = await listExport(ws, SPEC);
    const tar = await unpack(packExport(list.entries));
    expect(tar.map((e) => e.name)).toEqual(["empty.txt", "secrets", "src", "src/a.js", "src/big.bin", "tests", "tests/t.test.js"]);
    expect(tar.find((e) => e.name === "src/big.bin")!.body).toBe(BIG);
    expect(tar.find((e) => e.name === "src/a.js")).toMatchObject({ type: "file", body: "export const a = 1;\n", uid: 65534, gid: 65534 });
    // no setuid bit reaches the sandbox; the sandbox user can always read and write its copy
    expect(tar.find((e) => e.name === "src/a.js")!.mode & 0o7777).toBe(0o755);
    expect(tar.find((e) => e.name === "src")).toMatchObject({ type: "directory", uid: 65534 });
    expect(tar.find((e) => e.name === "src")!.mode & 0o700).toBe(0o700);
    const all = tar.map((e) => e.body).join("\n");
    for (const secret of ["hunter2", "npm_secret", "OPENSSH", "host secret"]) expect(all).not.toContain(secret);
  });

  it("a partial tar holds exactly the entries it is given", async () => {
    const list = await listExport(ws, SPEC);
    const tar = await unpack(packExport(list.entries.filter((e) => e.rel === "tests" || e.rel === "tests/t.test.js")));
    expect(tar.map((e) => e.name)).toEqual(["tests", "tests/t.test.js"]);
  });

  it("an opted-in path goes in and is reported once the copy is made; the other forbidden files stay out", async () => {
    const list = await listExport(ws, { forbidden: SPEC.forbidden, include: [".env.test"] });
    const tar = await unpack(packExport(list.entries));
    expect(tar.map((e) => e.name)).toContain(".env.test");
    expect(tar.map((e) => e.name)).not.toContain(".env");
    const seen: string[][] = [];
    notifyIncluded({ onIncluded: (p) => seen.push(p) }, list.entries);
    notifyIncluded(
      {
        onIncluded: () => {
          throw new Error("a hook that breaks its contract");
        },
      },
      list.entries,
    );
    expect(seen).toEqual([[".env.test"]]);
  });

  it("a file replaced by a hard link between the walk and the copy fails the tar instead of sending it", async () => {
    const list = await listExport(ws, SPEC);
    await fs.rm(path.join(ws, "tests/t.test.js"));
    await fs.link(path.join(root, "outside.txt"), path.join(ws, "tests/t.test.js"));
    const err = await unpack(packExport(list.entries)).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "sandbox_error")).toBe(true);
  });
});

import fs from "node:fs/promises";
import path from "node:path";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import type { SandboxSession } from "../../daemon/src/sandbox/executor.js";
import { listChangedIn } from "../../daemon/src/sandbox/changed-list.js";
import { availableRuntimes, freshStateDir, leftoversWithPrefix, removeWithPrefix, runIdPrefix, workspace } from "./helpers.js";

/**
 * `listChanged` on a warm session, against real sandboxes: the spawner compares
 * the fingerprint it took when a command started with /workspace after it
 * ended (`run --changed`, sandbox-image/helper/), before settle discards the
 * changes. The image is built from this tree's helper sources (pinTestImage).
 */
const prefix = runIdPrefix("changed");
let env: Awaited<ReturnType<typeof freshStateDir>>;

beforeAll(async () => {
  env = await freshStateDir();
});
afterAll(async () => {
  await removeWithPrefix(prefix);
  await fs.rm(env.stateDir, { recursive: true, force: true });
});

const runtimes = await availableRuntimes();

async function withSession<T>(name: string, runtime: "runc" | "runsc", fn: (s: SandboxSession) => Promise<T>): Promise<T> {
  const session = await new DockerExecutor({ lockPath: env.lockPath, config: { runtime } }).openSession(`${prefix}-${name}`);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

const node = (code: string) => ["node", "-e", `const fs=require('fs');process.chdir('/workspace');${code}`];

describe("the sandbox image", () => {
  it("carries this tree's relay, which knows `run --changed` (not an older image's); before any command there is no start fingerprint", async () => {
    const box = await new DockerExecutor({ lockPath: env.lockPath }).startFresh(`${prefix}-image`, "bench", false);
    try {
      const archive = (await box.container.getArchive({ path: "/opt/mini-agent/run" })) as NodeJS.ReadableStream;
      const bytes = await new Promise<Buffer>((resolve, reject) => {
        const extract = tar.extract();
        const chunks: Buffer[] = [];
        extract.on("entry", (_h, stream, next) => {
          stream.on("data", (c: unknown) => chunks.push(c as Buffer));
          stream.on("end", next);
        });
        extract.on("finish", () => resolve(Buffer.concat(chunks)));
        extract.on("error", reject);
        archive.pipe(extract);
      });
      expect(bytes.includes("run --changed MAXPATHS")).toBe(true);
      expect(await listChangedIn(box, 5, 60_000)).toEqual({ status: "unavailable", reason: expect.stringMatching(/^no start fingerprint of \/workspace/) });
    } finally {
      await box.remove();
    }
  });
});

describe("WarmSession: what a command changed in /workspace", () => {
  it.each(runtimes)(
    "lists exactly the created, modified, deleted and retyped paths (not a directory whose child changed); the changes are discarded, and the next command's list is its own (%s)",
    async (runtime) => {
      const dir = await workspace({ "keep.txt": "k", "mod.txt": "m1", "del.txt": "d", "sub/old.txt": "o", "same/x.txt": "x" });
      try {
        await withSession(`main-${runtime}`, runtime, async (s) => {
          const exec = (code: string) =>
            s.exec({ purpose: "candidate", argv: node(code), workspaceDir: dir, timeoutMs: 120_000, listChanged: { maxPaths: 50 } });
          const first = await exec(
            "fs.writeFileSync('new.txt','n');fs.appendFileSync('mod.txt','2');fs.rmSync('del.txt');fs.mkdirSync('newdir');fs.writeFileSync('newdir/f','f');" +
              "fs.writeFileSync('sub/new.txt','s');fs.rmSync('sub/old.txt');fs.rmSync('same/x.txt');fs.mkdirSync('same/x.txt')",
          );
          expect(first.exit_code, first.stderr).toBe(0);
          expect(first.changed).toEqual({
            status: "listed",
            paths: ["del.txt", "mod.txt", "new.txt", "newdir", "newdir/f", "same/x.txt", "sub/new.txt", "sub/old.txt"],
            truncated: false,
          });
          // settle emptied the changed copy and the sync sent the host's content again: nothing came back
          const dump =
            "const out={};const w=(d)=>{for(const n of fs.readdirSync(d).sort()){const p=d+'/'+n;if(fs.statSync(p).isDirectory())w(p);else out[p]=fs.readFileSync(p,'utf8')}};w('.');console.log(JSON.stringify(out));";
          const second = await exec(`${dump}fs.writeFileSync('second.txt','2')`);
          expect(second.exit_code, second.stderr).toBe(0);
          expect(JSON.parse(second.stdout)).toEqual({ "./keep.txt": "k", "./mod.txt": "m1", "./del.txt": "d", "./sub/old.txt": "o", "./same/x.txt": "x" });
          expect(second.changed).toEqual({ status: "listed", paths: ["second.txt"], truncated: false });
          const untouched = await exec(dump);
          expect(untouched.changed).toEqual({ status: "listed", paths: [], truncated: false });
        });
        // the host workspace itself was never touched
        expect((await fs.readdir(dir)).sort()).toEqual(["del.txt", "keep.txt", "mod.txt", "same", "sub"]);
        expect(await fs.readFile(path.join(dir, "mod.txt"), "utf8")).toBe("m1");
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
      expect(await leftoversWithPrefix(`${prefix}-main-${runtime}`)).toEqual({ containers: [], volumes: [] });
    },
  );

  it.each(runtimes)(
    "workspace links: an unchanged link is never listed, a write through a link lists its target, a link the command replaced is listed, and the host keeps its own links untouched (%s)",
    async (runtime) => {
      const dir = await workspace({ "real.txt": "r", "dir/x.txt": "x" });
      await fs.symlink("real.txt", path.join(dir, "link.txt"));
      await fs.symlink("dir", path.join(dir, "dir-link"));
      await fs.symlink("/etc/passwd", path.join(dir, "out-link"));
      try {
        await withSession(`links-${runtime}`, runtime, async (s) => {
          const exec = (code: string) =>
            s.exec({ purpose: "candidate", argv: node(code), workspaceDir: dir, timeoutMs: 120_000, listChanged: { maxPaths: 50 } });
          const read =
            "console.log(JSON.stringify([fs.readFileSync('link.txt','utf8'),fs.readlinkSync('dir-link'),fs.readdirSync('dir-link'),fs.existsSync('out-link')]));";
          const first = await exec(read);
          expect(first.exit_code, first.stderr).toBe(0);
          expect(JSON.parse(first.stdout)).toEqual(["r", "dir", ["x.txt"], false]);
          expect(first.changed).toEqual({ status: "listed", paths: [], truncated: false });
          expect(first.links_left_out).toEqual({ count: 1, by_reason: { outside: 1 }, paths: [{ path: "out-link", reason: "outside" }] });
          const second = await exec("fs.writeFileSync('link.txt','through');fs.rmSync('dir-link');fs.symlinkSync('/etc','dir-link')");
          expect(second.exit_code, second.stderr).toBe(0);
          expect(second.changed).toEqual({ status: "listed", paths: ["dir-link", "real.txt"], truncated: false });
          // settle discarded the sandbox's links and writes: the sync sent the host's links again
          const third = await exec(read);
          expect(JSON.parse(third.stdout)).toEqual(["r", "dir", ["x.txt"], false]);
          expect(third.changed).toEqual({ status: "listed", paths: [], truncated: false });
          // a link retargeted on the host goes in by a partial sync (the engine's extraction replaces the old link)
          await fs.writeFile(path.join(dir, "other.txt"), "o");
          await fs.rm(path.join(dir, "link.txt"));
          await fs.symlink("other.txt", path.join(dir, "link.txt"));
          const fourth = await exec(read);
          expect(JSON.parse(fourth.stdout)).toEqual(["o", "dir", ["x.txt"], false]);
          expect(fourth.changed).toEqual({ status: "listed", paths: [], truncated: false });
        });
        expect(await fs.readFile(path.join(dir, "real.txt"), "utf8")).toBe("r");
        expect(await fs.readlink(path.join(dir, "link.txt"))).toBe("other.txt");
        expect(await fs.readlink(path.join(dir, "dir-link"))).toBe("dir");
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
      expect(await leftoversWithPrefix(`${prefix}-links-${runtime}`)).toEqual({ containers: [], volumes: [] });
    },
  );

  it("a cap of 2 with 5 changes gives the first 2 paths and truncated=true", async () => {
    const dir = await workspace({ "a.txt": "a" });
    try {
      await withSession("cap", "runc", async (s) => {
        const r = await s.exec({
          purpose: "candidate",
          argv: node("for(const n of ['c5','c3','c1','c4','c2'])fs.writeFileSync(n,'x')"),
          workspaceDir: dir,
          timeoutMs: 120_000,
          listChanged: { maxPaths: 2 },
        });
        expect(r.changed).toEqual({ status: "listed", paths: ["c1", "c2"], truncated: true });
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("regression: a name with a newline or a byte that is not UTF-8 does not break the list's framing", async () => {
    const dir = await workspace({ "a.txt": "a" });
    try {
      await withSession("names", "runc", async (s) => {
        const r = await s.exec({
          purpose: "candidate",
          argv: node("fs.writeFileSync('new\\nline.txt','x');fs.writeFileSync(Buffer.from([0x62,0xff]),'x');fs.writeFileSync('end 0 0','x')"),
          workspaceDir: dir,
          timeoutMs: 120_000,
          listChanged: { maxPaths: 10 },
        });
        expect(r.exit_code, r.stderr).toBe(0);
        expect(r.changed).toEqual({ status: "listed", paths: ["b\\xff", "end 0 0", "new\nline.txt"], truncated: false });
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("regression: a directory the command made unreadable is listed, its children are not claimed deleted; /workspace itself chmod'ed is '.'", async () => {
    const dir = await workspace({ "a.txt": "a", "sub/old.txt": "o", "sub/deep/x.txt": "x" });
    try {
      await withSession("unreadable", "runc", async (s) => {
        const exec = (code: string) => s.exec({ purpose: "candidate", argv: node(code), workspaceDir: dir, timeoutMs: 120_000, listChanged: { maxPaths: 10 } });
        const closed = await exec("fs.chmodSync('sub',0)");
        expect(closed.exit_code, closed.stderr).toBe(0);
        expect(closed.changed).toEqual({ status: "listed", paths: ["sub"], truncated: false });
        const root = await exec("fs.chmodSync('/workspace',0o300)");
        expect(root.exit_code, root.stderr).toBe(0);
        expect(root.changed).toEqual({ status: "listed", paths: ["."], truncated: false });
        // settle opened both up again and emptied the copy: the next command sees the host's content
        const next = await exec("console.log(fs.readFileSync('sub/deep/x.txt','utf8'))");
        expect(next.stdout.trim()).toBe("x");
        expect(next.changed).toEqual({ status: "listed", paths: [], truncated: false });
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("a command stopped by its deadline or a cancel gives unavailable, and the next command gets a new sandbox and a list again", async () => {
    const dir = await workspace({ "a.txt": "a" });
    try {
      await withSession("timeout", "runc", async (s) => {
        const slow = await s.exec({
          purpose: "candidate",
          argv: node("fs.writeFileSync('late.txt','x');setTimeout(()=>{},600000)"),
          workspaceDir: dir,
          timeoutMs: 3_000,
          listChanged: { maxPaths: 10 },
        });
        expect(slow.timed_out).toBe(true);
        expect(slow.changed).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/deadline/) });
        const abort = new AbortController();
        setTimeout(() => abort.abort(), 3_000);
        const cancelled = await s.exec({
          purpose: "candidate",
          argv: node("fs.writeFileSync('late.txt','x');setTimeout(()=>{},600000)"),
          workspaceDir: dir,
          timeoutMs: 120_000,
          signal: abort.signal,
          listChanged: { maxPaths: 10 },
        });
        expect(cancelled.cancelled).toBe(true);
        expect(cancelled.changed).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/cancelled/) });
        const next = await s.exec({
          purpose: "candidate",
          argv: node("fs.rmSync('a.txt')"),
          workspaceDir: dir,
          timeoutMs: 120_000,
          listChanged: { maxPaths: 10 },
        });
        expect(next.changed).toEqual({ status: "listed", paths: ["a.txt"], truncated: false });
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("a fresh sandbox refuses listChanged (changed_list_unsupported) and creates no container", async () => {
    const dir = await workspace({ "a.txt": "a" });
    try {
      const err = await new DockerExecutor({ lockPath: env.lockPath })
        .run({ runId: `${prefix}-fresh`, purpose: "candidate", argv: ["node", "-e", "0"], workspaceDir: dir, timeoutMs: 60_000, listChanged: { maxPaths: 5 } })
        .catch((e) => e);
      expect(isMiniAgentError(err, "changed_list_unsupported")).toBe(true);
      expect(await leftoversWithPrefix(`${prefix}-fresh`)).toEqual({ containers: [], volumes: [] });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { DependencyLayers } from "../../daemon/src/sandbox/dependency-layer.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { LayerStatStore } from "../../daemon/src/sandbox/layer-stat-store.js";
import { hashNoFollow } from "../../daemon/src/workspace/read.js";
import { reapLeftovers } from "../../daemon/src/sandbox/reaper.js";
import { buildNodeBaseImage } from "../../sandbox-image/image-builder.js";
import { hostProcessesOf } from "../../probes/host-probes.js";
import {
  availableRuntimes,
  docker,
  freshStateDir,
  leftoversWithPrefix,
  ONLY_SANDBOX_PROCESSES,
  PROCESS_LIST,
  removeWithPrefix,
  runIdPrefix,
  workspace,
} from "./helpers.js";

const prefix = runIdPrefix("exec");
let env: Awaited<ReturnType<typeof freshStateDir>>;
let ws: string;

beforeAll(async () => {
  env = await freshStateDir();
  ws = await workspace({ "a.txt": "A", "sub/b.txt": "B", ".git/HEAD": "ref: x", "t.mjs": "console.log('hi')" });
});
afterAll(async () => {
  await removeWithPrefix(prefix);
  await fs.rm(env.stateDir, { recursive: true, force: true });
  await fs.rm(ws, { recursive: true, force: true });
});

const listing =
  "const fs=require('fs');const walk=(d)=>fs.readdirSync(d).flatMap(n=>fs.statSync(d+'/'+n).isDirectory()?walk(d+'/'+n):[d+'/'+n]);console.log(JSON.stringify(walk('/workspace').sort()))";

describe("DockerExecutor: pinning", () => {
  it("refuses with image_missing and the rebuild hint when the lock is missing", async () => {
    const ex = new DockerExecutor({ lockPath: path.join(env.stateDir, "no-such-lock.json") });
    const err = await ex
      .run({ runId: `${prefix}-nolock`, purpose: "candidate", argv: ["node", "-e", "0"], workspaceDir: ws, timeoutMs: 10_000 })
      .catch((e) => e);
    expect(isMiniAgentError(err, "image_missing")).toBe(true);
    expect(err.message).toContain("npm run image:build");
  });

  it("refuses with image_missing when the pinned digest is not in the engine", async () => {
    const lockPath = path.join(env.stateDir, "ghost-lock.json");
    await fs.writeFile(lockPath, JSON.stringify({ schema_version: 1, images: { node: { tag: "x", digest: "sha256:" + "0".repeat(64), built_at: "t" } } }));
    const err = await new DockerExecutor({ lockPath }).pinnedDigest().catch((e) => e);
    expect(isMiniAgentError(err, "image_missing")).toBe(true);
  });

  it("refuses with image_digest_mismatch when the configured tag resolves to another image", async () => {
    // the node-base image is a different image: its tag must not satisfy the sandbox pin
    const base = await buildNodeBaseImage(docker);
    expect(base.digest).not.toBe(env.digest);
    const ex = new DockerExecutor({ lockPath: env.lockPath, config: { imageTag: base.tag } });
    const err = await ex.pinnedDigest().catch((e) => e);
    expect(isMiniAgentError(err, "image_digest_mismatch")).toBe(true);
    expect(err.message).toContain("npm run image:build");
    await expect(new DockerExecutor({ lockPath: env.lockPath, config: { imageTag: env.tag } }).pinnedDigest()).resolves.toBe(env.digest);
  });

  it("rejects unknown executor options", () => {
    expect(() => new DockerExecutor({ lockPath: env.lockPath, config: { memory: 1 } })).toThrow(/memoryBytes/);
  });
});

describe("DockerExecutor: fresh run", () => {
  it("copies the workspace in (without .git), runs by digest, and leaves nothing behind", async () => {
    const ex = new DockerExecutor({ lockPath: env.lockPath });
    const r = await ex.run({ runId: `${prefix}-fresh`, purpose: "verifier", argv: ["node", "-e", listing], workspaceDir: ws, timeoutMs: 60_000 });
    expect(r.exit_code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(["/workspace/a.txt", "/workspace/sub/b.txt", "/workspace/t.mjs"]);
    expect(r.image_digest).toBe(env.digest);
    expect(r.runtime).toBe("runc");
    expect(await leftoversWithPrefix(`${prefix}-fresh`)).toEqual({ containers: [], volumes: [] });
  });

  it("gives control assets read-only under /control and never inside /workspace", async () => {
    const ctl = await workspace({ "hidden.test.mjs": "secret case" });
    try {
      const code =
        "const fs=require('fs');let w;try{fs.writeFileSync('/control/hidden.test.mjs','x');w='written'}catch(e){w=e.code}console.log(JSON.stringify({w,c:fs.readFileSync('/control/hidden.test.mjs','utf8'),ws:fs.readdirSync('/workspace')}))";
      const r = await new DockerExecutor({ lockPath: env.lockPath }).run({
        runId: `${prefix}-ctl`,
        purpose: "acceptance",
        argv: ["node", "-e", code],
        workspaceDir: ws,
        controlDir: ctl,
        timeoutMs: 60_000,
      });
      const o = JSON.parse(r.stdout);
      expect(o.w).toBe("EACCES");
      expect(o.c).toBe("secret case");
      expect(o.ws).not.toContain("hidden.test.mjs");
    } finally {
      await fs.rm(ctl, { recursive: true, force: true });
    }
  });

  it("refuses env names outside the allowlist before creating anything", async () => {
    const err = await new DockerExecutor({ lockPath: env.lockPath })
      .run({
        runId: `${prefix}-env`,
        purpose: "candidate",
        argv: ["node", "-e", "0"],
        workspaceDir: ws,
        env: { AWS_SECRET_ACCESS_KEY: "x" },
        timeoutMs: 10_000,
      })
      .catch((e) => e);
    expect(isMiniAgentError(err, "invalid_fields")).toBe(true);
    expect(await leftoversWithPrefix(`${prefix}-env`)).toEqual({ containers: [], volumes: [] });
  });
});

const runtimes = await availableRuntimes();

describe("DockerExecutor: warm session", () => {
  it("mirrors the host workspace before each exec, deletions included", async () => {
    const dir = await workspace({ "keep.txt": "1", "gone.txt": "2" });
    const session = await new DockerExecutor({ lockPath: env.lockPath }).openSession(`${prefix}-warm`);
    try {
      const first = await session.exec({
        purpose: "candidate",
        argv: ["node", "-e", listing + ";require('fs').writeFileSync('/workspace/made-in-sandbox.txt','x')"],
        workspaceDir: dir,
        timeoutMs: 60_000,
      });
      expect(JSON.parse(first.stdout)).toEqual(["/workspace/gone.txt", "/workspace/keep.txt"]);
      await fs.rm(path.join(dir, "gone.txt"));
      await fs.writeFile(path.join(dir, "new.txt"), "3");
      const second = await session.exec({ purpose: "candidate", argv: ["node", "-e", listing], workspaceDir: dir, timeoutMs: 60_000 });
      expect(JSON.parse(second.stdout)).toEqual(["/workspace/keep.txt", "/workspace/new.txt"]);
      // the sandbox wrote into its own copy only
      await expect(fs.stat(path.join(dir, "made-in-sandbox.txt"))).rejects.toThrow();
    } finally {
      await session.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
    expect(await leftoversWithPrefix(`${prefix}-warm`)).toEqual({ containers: [], volumes: [] });
  });

  // Regression guard for the incremental sync: only changed files go in, and only while the
  // previous command left /workspace untouched; a stale or edited copy must never be reused.
  it.each(runtimes)(
    "sends only host changes while the sandbox copy is untouched, and resyncs fully after a command edits or deletes in /workspace (%s)",
    async (runtime) => {
      const dir = await workspace({ "a.txt": "a1", "sub/b.txt": "b1" });
      const session = await new DockerExecutor({ lockPath: env.lockPath, config: { runtime } }).openSession(`${prefix}-incr`);
      const dump =
        "const fs=require('fs');const out={};const w=(d)=>{for(const n of fs.readdirSync(d).sort()){const p=d+'/'+n;" +
        "if(fs.statSync(p).isDirectory())w(p);else out[p]=fs.readFileSync(p,'utf8')}};w('/workspace');console.log(JSON.stringify(out))";
      const run = async (extra = "") => {
        const r = await session.exec({ purpose: "candidate", argv: ["node", "-e", dump + extra], workspaceDir: dir, timeoutMs: 60_000 });
        expect(r.exit_code, r.stderr).toBe(0);
        return JSON.parse(r.stdout.trim().split("\n")[0]!);
      };
      try {
        expect(await run()).toEqual({ "/workspace/a.txt": "a1", "/workspace/sub/b.txt": "b1" });
        // unchanged host, untouched copy: nothing to send, same content
        expect(await run()).toEqual({ "/workspace/a.txt": "a1", "/workspace/sub/b.txt": "b1" });
        // same size, new content, and a new directory: sent as changes
        await fs.writeFile(path.join(dir, "a.txt"), "a2");
        await fs.mkdir(path.join(dir, "new/deep"), { recursive: true });
        await fs.writeFile(path.join(dir, "new/deep/c.txt"), "c1");
        // this command rewrites a file and deletes another in its own copy
        expect(await run(";fs.writeFileSync('/workspace/sub/b.txt','EVIL');fs.rmSync('/workspace/a.txt')")).toEqual({
          "/workspace/a.txt": "a2",
          "/workspace/new/deep/c.txt": "c1",
          "/workspace/sub/b.txt": "b1",
        });
        // the edits above were the sandbox's own: the next run sees the host's content again
        expect(await run()).toEqual({ "/workspace/a.txt": "a2", "/workspace/new/deep/c.txt": "c1", "/workspace/sub/b.txt": "b1" });
        // a command that only changes a timestamp counts as a change too
        expect(await run(";fs.utimesSync('/workspace/sub/b.txt',1,1);fs.appendFileSync('/tmp/x','')")).toEqual({
          "/workspace/a.txt": "a2",
          "/workspace/new/deep/c.txt": "c1",
          "/workspace/sub/b.txt": "b1",
        });
        await fs.rm(path.join(dir, "new"), { recursive: true });
        expect(await run()).toEqual({ "/workspace/a.txt": "a2", "/workspace/sub/b.txt": "b1" });
      } finally {
        await session.close();
        await fs.rm(dir, { recursive: true, force: true });
      }
      expect(await leftoversWithPrefix(`${prefix}-incr`)).toEqual({ containers: [], volumes: [] });
    },
  );

  // Commands of a warm session come over the spawner's attached stdin and end with a nonce marker:
  // a command printing a marker-like line must neither end early nor choose its exit code.
  it.each(runtimes)(
    "a warm exec keeps exit code, both streams and env as a fresh run gives them, and a forged end marker is just output (%s)",
    async (runtime) => {
      const ex = new DockerExecutor({ lockPath: env.lockPath, config: { runtime } });
      const session = await ex.openSession(`${prefix}-attach`);
      const script =
        "process.stdout.write('\\0mini-agent-end:'+'0'.repeat(32)+':0\\0');process.stderr.write('\\0mini-agent-end:'+'0'.repeat(32)+'\\0');" +
        "setTimeout(()=>{process.stdout.write('out-no-newline');process.stderr.write(JSON.stringify({env:Object.keys(process.env).sort(),cwd:process.cwd()}));process.exit(5)},100)";
      try {
        const warm = await session.exec({ purpose: "candidate", argv: ["node", "-e", script], workspaceDir: ws, timeoutMs: 60_000, env: { CI: "1" } });
        const fresh = await ex.run({
          runId: `${prefix}-attach-fresh`,
          purpose: "candidate",
          argv: ["node", "-e", script],
          workspaceDir: ws,
          timeoutMs: 60_000,
          env: { CI: "1" },
        });
        for (const r of [warm, fresh]) {
          expect(r.exit_code).toBe(5);
          expect(r.stdout).toBe(`\0mini-agent-end:${"0".repeat(32)}:0\0out-no-newline`);
          expect(r.stderr.startsWith(`\0mini-agent-end:${"0".repeat(32)}\0`)).toBe(true);
        }
        const seen = (r: { stderr: string }) => JSON.parse(r.stderr.slice(r.stderr.indexOf("{")));
        expect(seen(warm)).toEqual(seen(fresh));
        expect(seen(warm).env).toContain("CI");
        // a big chatty output still arrives whole up to the cap
        const big = await session.exec({
          purpose: "candidate",
          argv: ["node", "-e", "process.stdout.write('y'.repeat(300000))"],
          workspaceDir: ws,
          timeoutMs: 60_000,
        });
        expect(big).toMatchObject({ exit_code: 0, truncated: false });
        expect(big.stdout.length).toBe(300000);
      } finally {
        await session.close();
      }
      expect(await leftoversWithPrefix(`${prefix}-attach`)).toEqual({ containers: [], volumes: [] });
    },
  );

  it("kills detached leftovers of one exec before the next (regression: a grandchild outliving its test run)", async () => {
    const session = await new DockerExecutor({ lockPath: env.lockPath }).openSession(`${prefix}-leftover`);
    try {
      const spawnDetached =
        "const c=require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{detached:true,stdio:'ignore'});c.unref();console.log(c.pid)";
      const r1 = await session.exec({ purpose: "candidate", argv: ["node", "-e", spawnDetached], workspaceDir: ws, timeoutMs: 60_000 });
      expect(r1.exit_code).toBe(0);
      const count = PROCESS_LIST;
      const r2 = await session.exec({ purpose: "candidate", argv: ["node", "-e", count], workspaceDir: ws, timeoutMs: 60_000 });
      // init, spawner and this node: nothing from the previous exec
      expect(JSON.parse(r2.stdout)).toEqual(ONLY_SANDBOX_PROCESSES);
    } finally {
      await session.close();
    }
  });

  it("refuses control assets in a warm session (they only go to fresh sandboxes)", async () => {
    const session = await new DockerExecutor({ lockPath: env.lockPath }).openSession(`${prefix}-noctl`);
    try {
      const err = await session.exec({ purpose: "candidate", argv: ["node", "-e", "0"], workspaceDir: ws, controlDir: ws, timeoutMs: 10_000 }).catch((e) => e);
      expect(isMiniAgentError(err, "invalid_fields")).toBe(true);
    } finally {
      await session.close();
    }
  });
});

describe("reaper", () => {
  it("removes every labelled container of a run, its volumes with it", async () => {
    const ex = new DockerExecutor({ lockPath: env.lockPath });
    const box = await ex.startFresh(`${prefix}-reap`, "candidate", true);
    const left = await leftoversWithPrefix(`${prefix}-reap`);
    expect(left.containers).toHaveLength(1);
    expect(left.volumes).toHaveLength(2);
    // the host-side process check sees a live sandbox (so "none left" later means something)
    expect(hostProcessesOf([box.id]).length).toBeGreaterThan(0);
    const removed = await reapLeftovers(docker, { runId: `${prefix}-reap` });
    expect(removed.containers).toBe(1);
    expect(await leftoversWithPrefix(`${prefix}-reap`)).toEqual({ containers: [], volumes: [] });
    expect(hostProcessesOf([box.id])).toEqual([]);
    await box.remove();
  });

  it("removes a run's volumes the engine left behind without their container", async () => {
    const ex = new DockerExecutor({ lockPath: env.lockPath });
    const box = await ex.startFresh(`${prefix}-orphan`, "candidate", true);
    // the container goes, its volumes stay (as when the engine fails to remove them)
    await docker.getContainer(box.id).remove({ force: true, v: false });
    expect(await leftoversWithPrefix(`${prefix}-orphan`)).toMatchObject({ containers: [], volumes: [expect.any(String), expect.any(String)] });
    const removed = await reapLeftovers(docker, { runId: `${prefix}-orphan` });
    expect(removed).toEqual({ containers: 0, volumes: 2 });
    expect(await leftoversWithPrefix(`${prefix}-orphan`)).toEqual({ containers: [], volumes: [] });
    await box.remove();
  });

  it("a sandbox's own removal also finds volumes the engine left", async () => {
    const ex = new DockerExecutor({ lockPath: env.lockPath });
    const box = await ex.startFresh(`${prefix}-own`, "candidate", true);
    await docker.getContainer(box.id).remove({ force: true, v: false });
    expect((await leftoversWithPrefix(`${prefix}-own`)).volumes).toHaveLength(2);
    await box.remove();
    expect(await leftoversWithPrefix(`${prefix}-own`)).toEqual({ containers: [], volumes: [] });
  });
});

describe("DependencyLayers: a found folder keyed by its stat index", () => {
  it("regression: a found node_modules was read and hashed whole at every run creation (4.5 s for 150 MiB); keyed again it reads no file, and a layer the engine lost, or an index naming other bytes, is built from bytes read then", async () => {
    const reads: string[] = [];
    const dir = path.join(env.stateDir, "layers");
    const instance = crypto.randomBytes(8).toString("hex");
    // a clock 10 s ahead: every file written here is older than the racily-clean line
    const now = () => Date.now() + 10_000;
    const hashFile = (abs: string) => {
      reads.push(path.basename(abs));
      return hashNoFollow(abs, null);
    };
    const layers = new DependencyLayers({ docker, dir, instance, now, hashFile });
    const ex = new DockerExecutor({ lockPath: env.lockPath, docker, layers, config: { instance } });
    const dws = await fs.realpath(
      await workspace({ "package-lock.json": "{}", "node_modules/a/a.js": "exports.a = 1;\n", "node_modules/b/b.js": "exports.b = 2;\n" }),
    );
    const spec = { forbidden: [], include: [] };
    const indexFile = new LayerStatStore(dir, pino({ level: "silent" })).path(dws, "node_modules");
    const keyed = async () => {
      reads.length = 0;
      const [ref] = await ex.prepareLayers(dws, spec);
      return ref!;
    };
    try {
      const first = await keyed();
      expect(reads.sort()).toEqual(["a.js", "b.js"]);
      expect((await keyed()).volume).toBe(first.volume);
      expect(reads).toEqual([]);

      // the engine lost the volume: built again, every byte read now, under the same key
      await docker.getVolume(first.volume).remove();
      expect(await keyed()).toEqual(first);
      expect(reads.sort()).toEqual(["a.js", "b.js"]);
      await docker.getVolume(first.volume).inspect();

      // an index whose stamps match but whose hash names other bytes, and no layer under that key: hashed whole
      const index = JSON.parse(await fs.readFile(indexFile, "utf8")) as { entries: Array<{ rel: string; sha256?: string }> };
      for (const e of index.entries) if (e.rel === "a/a.js") e.sha256 = "f".repeat(64);
      await fs.writeFile(indexFile, JSON.stringify(index));
      await docker.getVolume(first.volume).remove();
      expect(await keyed()).toEqual(first);
      expect(reads.sort()).toEqual(["a.js", "b.js"]);
      expect((await layers.list()).map((l) => l.key)).toEqual([first.key]);

      // a corrupt index: hashed whole, never an error
      await fs.writeFile(indexFile, "{");
      expect(await keyed()).toEqual(first);
      expect(reads.sort()).toEqual(["a.js", "b.js"]);

      // the layer removed (env gc): its index goes with it
      await layers.remove(first.key);
      await expect(fs.access(indexFile)).rejects.toThrow();
    } finally {
      for (const l of await layers.list()) await layers.remove(l.key).catch(() => undefined);
      await fs.rm(dws, { recursive: true, force: true });
    }
  }, 120_000);
});

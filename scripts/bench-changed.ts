import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { IN_IMAGE } from "../daemon/src/sandbox/host-config.js";
import { recordImage } from "../daemon/src/sandbox/image-lock.js";
import { buildFamily } from "../sandbox-image/image-builder.js";

/**
 * `node --import tsx scripts/bench-changed.ts [--files N] [--runs R] [--runtime runc|runsc ...]`
 * What listing a command's changes costs in a warm node sandbox (`run
 * --changed`, one extra `docker exec` after the command, on the caller's path
 * because it must come before settle): the median wall time of the same
 * command with and without `listChanged`, alternated in one warm session per
 * runtime, side by side. The workspace holds N small files (the spawner walks
 * /workspace once more). Builds (or reuses, via the engine's cache) the node
 * image from this tree in a temp state dir. Never a timed test.
 */
function parseArgs(argv: string[]) {
  const o = { files: 200, runs: 11, runtimes: [] as Array<"runc" | "runsc"> };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--files") o.files = Number(argv[++i]);
    else if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--runtime") {
      const r = argv[++i];
      if (r !== "runc" && r !== "runsc") throw new Error(`unknown --runtime ${r}; use runc or runsc`);
      o.runtimes.push(r);
    } else throw new Error(`unknown option ${a}; use --files N, --runs R, --runtime runc|runsc (repeatable)`);
  }
  for (const k of ["files", "runs"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  if (o.runtimes.length === 0) o.runtimes = ["runc", "runsc"];
  return o;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** How much of the extra time is the `docker exec` itself: a control exec that asks the spawner nothing vs `run --changed`. */
async function execCosts(ex: DockerExecutor, runs: number): Promise<{ bareExec: number; changedExec: number }> {
  const box = await ex.startFresh(`bench-changed-exec-${process.pid}`, "bench", false);
  try {
    const spec = { env: [], timeoutMs: 60_000, capBytes: 1 << 20, onStop: () => box.kill() };
    // one command first, so the spawner holds a start fingerprint
    await box.run({ ...spec, argv: ["node", "-e", "0"] });
    const time = async (argv: string[]) => {
      const t0 = performance.now();
      const r = await box.control({ ...spec, argv });
      if (r.exitCode === null) throw new Error(`control exec ${argv.join(" ")} gave no status`);
      return performance.now() - t0;
    };
    const bare: number[] = [];
    const changed: number[] = [];
    for (let i = 0; i < runs; i++) {
      bare.push(await time([...IN_IMAGE.readReport, "/tmp/none", "1"]));
      changed.push(await time([...IN_IMAGE.changed, "100"]));
    }
    return { bareExec: median(bare), changedExec: median(changed) };
  } finally {
    await box.remove();
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const docker = createDockerClient(process.env);
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bench-changed-"));
  try {
    const lockPath = path.join(tmp, "sandbox-image.lock.json");
    const built = await buildFamily(docker, "node");
    await recordImage(lockPath, "node", { tag: built.tag, digest: built.digest, built_at: new Date().toISOString() });
    const ws = path.join(tmp, "ws");
    for (let i = 0; i < o.files; i++) {
      await fs.mkdir(path.join(ws, `d${i % 10}`), { recursive: true });
      await fs.writeFile(path.join(ws, `d${i % 10}`, `f${i}.txt`), `file ${i}\n`);
    }
    const rows: Array<{ runtime: string; plain: number; listed: number; bareExec: number; changedExec: number }> = [];
    for (const runtime of o.runtimes) {
      const ex = new DockerExecutor({ lockPath, docker, config: { runtime } });
      const session = await ex.openSession(`bench-changed-${process.pid}`);
      const time = async (list: boolean) => {
        const t0 = performance.now();
        const r = await session.exec({
          purpose: "bench",
          argv: ["node", "-e", "0"],
          workspaceDir: ws,
          timeoutMs: 120_000,
          ...(list && { listChanged: { maxPaths: 100 } }),
        });
        if (r.exit_code !== 0) throw new Error(`the command failed: ${r.stderr}`);
        if (list && (r.changed?.status !== "listed" || r.changed.paths.length !== 0)) throw new Error(`unexpected list: ${JSON.stringify(r.changed)}`);
        return performance.now() - t0;
      };
      try {
        await time(true); // warm-up: the first sync sends the whole workspace
        const plain: number[] = [];
        const listed: number[] = [];
        for (let i = 0; i < o.runs; i++) {
          plain.push(await time(false));
          listed.push(await time(true));
        }
        rows.push({ runtime, plain: median(plain), listed: median(listed), ...(await execCosts(ex, o.runs)) });
      } finally {
        await session.close();
      }
    }
    console.log(`warm node sandbox, \`node -e 0\` over ${o.files} files, ${o.runs} runs each (medians, ms):`);
    console.log(`  runtime   command   + listChanged   extra   bare control exec   run --changed exec`);
    for (const r of rows) {
      const cells = [r.plain, r.listed, r.listed - r.plain, r.bareExec, r.changedExec].map((v, i) => v.toFixed(0).padStart([7, 13, 5, 17, 18][i]!));
      console.log(`  ${r.runtime.padEnd(8)}  ${cells.join("   ")}`);
    }
    console.log(
      "  (bare control exec: `run --read-report` of a missing file, which asks the spawner nothing; measured against `run --changed` in one sandbox after one command, alternated)",
    );
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

await main();

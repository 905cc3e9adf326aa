import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { recordImage } from "../daemon/src/sandbox/image-lock.js";
import { buildFamily } from "../sandbox-image/image-builder.js";

/**
 * `node --import tsx scripts/bench-report-read.ts [--bytes N] [--runs R] [--runtime runc|runsc]`
 * What reading a JUnit report back from a warm python sandbox costs
 * (`run --read-report`, one extra `docker exec` after the command): the median
 * wall time of the same command with and without `reportFile`, in one warm
 * session, and the difference. Builds (or reuses, via the engine's cache) the
 * python image in a temp state dir. Never a timed test.
 */
function parseArgs(argv: string[]) {
  const o = { bytes: 262_144, runs: 9, runtime: "runc" as "runc" | "runsc" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--bytes") o.bytes = Number(argv[++i]);
    else if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--runtime") {
      const r = argv[++i];
      if (r !== "runc" && r !== "runsc") throw new Error(`unknown --runtime ${r}; use runc or runsc`);
      o.runtime = r;
    } else throw new Error(`unknown option ${a}; use --bytes N, --runs R, --runtime runc|runsc`);
  }
  for (const k of ["bytes", "runs"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  return o;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const docker = createDockerClient(process.env);
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bench-report-read-"));
  try {
    const lockPath = path.join(tmp, "sandbox-image.lock.json");
    const built = await buildFamily(docker, "python");
    await recordImage(lockPath, "python", { tag: built.tag, digest: built.digest, built_at: new Date().toISOString() });
    const ws = path.join(tmp, "ws");
    await fs.mkdir(ws);
    const ex = new DockerExecutor({ lockPath, docker, config: { imageFamily: "python", runtime: o.runtime } });
    const session = await ex.openSession(`bench-report-read-${process.pid}`);
    const argv = ["python3", "-c", `open('/tmp/mini-agent-junit.xml','wb').write(b'x' * ${o.bytes})`];
    const time = async (withReport: boolean) => {
      const t0 = performance.now();
      const r = await session.exec({
        purpose: "bench",
        argv,
        workspaceDir: ws,
        timeoutMs: 120_000,
        ...(withReport && { reportFile: { path: "/tmp/mini-agent-junit.xml", maxBytes: 2_097_152 } }),
      });
      if (r.exit_code !== 0) throw new Error(`the command failed: ${r.stderr}`);
      if (withReport && (r.report?.status !== "read" || r.report.bytes.length !== o.bytes))
        throw new Error(`report not read back: ${JSON.stringify(r.report?.status)}`);
      return performance.now() - t0;
    };
    try {
      await time(true); // warm-up
      const plain: number[] = [];
      const read: number[] = [];
      for (let i = 0; i < o.runs; i++) {
        plain.push(await time(false));
        read.push(await time(true));
      }
      const [p, r] = [median(plain), median(read)];
      console.log(`runtime ${o.runtime}, report ${o.bytes} bytes, ${o.runs} runs each (medians):`);
      console.log(`  command alone           ${p.toFixed(0)} ms`);
      console.log(`  command + report read   ${r.toFixed(0)} ms`);
      console.log(`  read-back cost          ${(r - p).toFixed(0)} ms`);
    } finally {
      await session.close();
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

await main();

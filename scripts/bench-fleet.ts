import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { EvalReport } from "../daemon/src/contracts/eval-report.js";
import { IMAGE_FAMILIES } from "../daemon/src/contracts/sandbox.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { pinFamilyImage } from "../sandbox-image/pin-image.js";
import { containersOf, runClient, startRedis, startWorker, type WorkerHandle, workerStateDir } from "./fleet-kit.js";

/**
 * `npm run bench:fleet [-- --suite DIR] [--image-lock FILE]`
 * In ONE invocation: a Redis of its own (scripts/redis-ensure.sh, 127.0.0.1,
 * a fresh password), then the suite (default: the shipped evals/) through
 * `eval run --queue` on 1 worker, then on 2 workers (each with its own state
 * dir, all on this machine, concurrency 1 each), a fresh output folder each.
 * Prints per level: cases, passed, wall time, cases per minute, p50/p95 case
 * time (the report's), and the containers left by the workers (must be 0);
 * then the 2-worker/1-worker throughput. Reported, not asserted: on a 2-core
 * machine both workers share the cores with Docker and the sandboxes.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

function parseArgs(argv: string[]): { suite: string; imageLock: string | null } {
  const o = { suite: path.join(REPO, "evals"), imageLock: null as string | null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--suite") o.suite = path.resolve(argv[++i] ?? "");
    else if (a === "--image-lock") o.imageLock = path.resolve(argv[++i] ?? "");
    else throw new Error(`unknown option ${a}; use --suite DIR or --image-lock FILE`);
  }
  return o;
}

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2));
  const docker = createDockerClient(process.env);
  await docker.ping();
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-fleet-"));
  const lock = path.join(base, "sandbox-image.lock.json");
  for (const f of IMAGE_FAMILIES) await pinFamilyImage(docker, lock, f, opts.imageLock);
  const redis = await startRedis(path.join(base, "redis"));
  const rows: string[] = [];
  const perMin: number[] = [];
  try {
    for (const n of [1, 2]) {
      const workers: WorkerHandle[] = [];
      try {
        for (let i = 0; i < n; i++)
          workers.push(
            await startWorker({
              queue: redis.queueUrl,
              passwordFile: redis.passwordFile,
              stateDir: workerStateDir(base, `l${n}-w${i}`, lock),
              id: `bench-l${n}-w${i}`,
            }),
          );
        const out = path.join(base, `out-${n}`);
        const t0 = performance.now();
        const res = await runClient(["eval", "run", opts.suite, "--output", out, ...redis.queueArgs, "--json"]);
        const wallS = (performance.now() - t0) / 1000;
        if (![0, 1].includes(res.code)) throw new Error(`eval run on ${n} worker(s) exited ${res.code}:\n${res.stderr}`);
        const r = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
        const a = r.aggregates;
        const cpm = a.cases / (wallS / 60);
        perMin.push(cpm);
        for (const w of workers.splice(0)) await w.stop("SIGTERM");
        let left = 0;
        for (let i = 0; i < n; i++) left += (await containersOf(docker, path.join(base, `l${n}-w${i}`))).length;
        rows.push(
          `${n} worker(s): ${a.cases} cases, ${a.passed} passed, wall ${wallS.toFixed(1)}s, ${cpm.toFixed(2)} cases/min, p50 ${(a.wall_ms.p50 / 1000).toFixed(1)}s, p95 ${(a.wall_ms.p95 / 1000).toFixed(1)}s per case, leftovers ${left}`,
        );
        process.stdout.write(`${rows.at(-1)}\n`);
      } finally {
        for (const w of workers) await w.stop("SIGKILL");
      }
    }
  } finally {
    await redis.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
  process.stdout.write(`bench:fleet on ${os.availableParallelism()} cores: 2 workers / 1 worker throughput = ${(perMin[1]! / perMin[0]!).toFixed(2)}x\n`);
  return 0;
}

process.exitCode = await main();

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { builtBin, sourceOf } from "./bins.js";
import { ENTRIES, REPO } from "./bundle.js";
import { startRedis } from "./fleet-kit.js";

/**
 * `npm run bench:startup [-- --runs N] [--image-lock FILE]`
 * The test suite spawns the daemon, the worker and the client hundreds of times
 * on 2 shared cores, so their start-up CPU is suite time. In ONE run,
 * interleaved so other load hits every column alike, the median CPU (user+sys)
 * of each start from three trees side by side: the sources through tsx, tsc's
 * output, and the bundles `npm run build` writes (scripts/bundle.ts). tsc's and
 * the bundled tree are compiled into a temp dir from the current sources, so the
 * comparison never measures a stale dist/. With an image lock (default
 * $MINI_AGENT_TEST_IMAGE_LOCK) and an engine, the daemon is also timed to
 * "ready", and with redis-server on PATH the worker too. Numbers only, never a
 * timed assertion.
 */
type Tree = "tsx" | "tsc" | "bundle";
const TREES: Tree[] = ["tsx", "tsc", "bundle"];

function parseArgs(argv: string[]): { runs: number; imageLock: string | null } {
  const o = { runs: 5, imageLock: process.env.MINI_AGENT_TEST_IMAGE_LOCK ?? null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--image-lock") o.imageLock = argv[++i] ?? null;
    else throw new Error(`unknown option ${a}; use --runs N or --image-lock FILE`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be a positive integer");
  if (o.imageLock !== null && !fs.existsSync(o.imageLock)) throw new Error(`--image-lock ${o.imageLock}: no such file`);
  return o;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** user+sys CPU in ms from a /proc stat line; `children`: of the waited-for children instead of the process itself */
function cpuFromStat(stat: string, children: boolean): number {
  // fields after the ")" that ends the command name: utime, stime are the 12th and 13th, cutime, cstime the 14th and 15th
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [u, s] = children ? [f[13], f[14]] : [f[11], f[12]];
  return ((Number(u) + Number(s)) * 1000) / 100; // USER_HZ is 100 on Linux
}

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", NO_COLOR: "1" };

/** CPU of one process run to its exit (the waited-for children's counter grows by exactly its share) */
function cpuToExit(args: string[]): number {
  const before = cpuFromStat(fs.readFileSync("/proc/self/stat", "utf8"), true);
  const r = spawnSync(process.execPath, args, { cwd: REPO, env: ENV, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return cpuFromStat(fs.readFileSync("/proc/self/stat", "utf8"), true) - before;
}

/** CPU of one long-running process from its start until it prints `ready`, read from /proc while it still runs; then stopped */
async function cpuToReady(args: string[], ready: RegExp): Promise<number> {
  const p: ChildProcess = spawn(process.execPath, args, { cwd: REPO, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  p.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  p.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => p.once("exit", () => r()));
  try {
    const deadline = Date.now() + 120_000;
    while (!ready.test(out)) {
      if (p.exitCode !== null || p.signalCode !== null || Date.now() > deadline) throw new Error(`node ${args.join(" ")} was not ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return cpuFromStat(fs.readFileSync(`/proc/${p.pid}/stat`, "utf8"), false);
  } finally {
    if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
    await exited;
  }
}

/**
 * tsc's output and the bundles, each in a tree of its own that resolves packages and
 * fixtures as the checkout does (node_modules and fixtures linked, package.json copied).
 */
function buildTrees(root: string): Record<Exclude<Tree, "tsx">, string> {
  const trees = { tsc: path.join(root, "tsc"), bundle: path.join(root, "bundle") };
  for (const t of Object.values(trees)) {
    fs.mkdirSync(t, { recursive: true });
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(t, "node_modules"));
    fs.symlinkSync(path.join(REPO, "fixtures"), path.join(t, "fixtures"));
    fs.copyFileSync(path.join(REPO, "package.json"), path.join(t, "package.json"));
  }
  const tsc = spawnSync(
    process.execPath,
    [path.join(REPO, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json", "--outDir", path.join(trees.tsc, "dist")],
    {
      cwd: REPO,
      encoding: "utf8",
    },
  );
  if (!fs.existsSync(path.join(trees.tsc, "dist/daemon/src/cli.js"))) throw new Error(`tsc wrote nothing:\n${tsc.stdout}${tsc.stderr}`);
  fs.cpSync(path.join(trees.tsc, "dist"), path.join(trees.bundle, "dist"), { recursive: true });
  const b = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO, "scripts/bundle.ts"), "--dist", path.join(trees.bundle, "dist")], {
    cwd: REPO,
    encoding: "utf8",
  });
  if (b.status !== 0) throw new Error(`bundling failed:\n${b.stdout}${b.stderr}`);
  return trees;
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-startup-"));
  const stops: Array<() => Promise<void>> = [];
  try {
    const trees = buildTrees(root);
    /** the node arguments that start a bin from one tree */
    const bin = (tree: Tree, name: "daemon" | "client" | "worker"): string[] => {
      const built = builtBin(name);
      if (tree === "tsx") return ["--import", "tsx", sourceOf(built)];
      return [path.join(trees[tree], path.relative(REPO, built))];
    };
    const cases: Array<{ name: string; run: (tree: Tree) => Promise<number> }> = [
      { name: "daemon --help", run: async (t) => cpuToExit([...bin(t, "daemon"), "--help"]) },
      { name: "worker --help", run: async (t) => cpuToExit([...bin(t, "worker"), "--help"]) },
      { name: "client --help", run: async (t) => cpuToExit([...bin(t, "client"), "--help"]) },
      { name: "client eval --help", run: async (t) => cpuToExit([...bin(t, "client"), "eval", "--help"]) },
    ];
    const notes: string[] = [];
    if (o.imageLock === null) notes.push("no image lock (--image-lock or MINI_AGENT_TEST_IMAGE_LOCK): the daemon and worker starts to ready were not timed");
    else {
      const stateDir = (name: string): string => {
        const d = path.join(root, name);
        fs.mkdirSync(d, { recursive: true, mode: 0o700 });
        fs.copyFileSync(o.imageLock!, path.join(d, "sandbox-image.lock.json"));
        return d;
      };
      let n = 0;
      cases.push({
        name: "daemon to ready",
        run: (t) =>
          cpuToReady([...bin(t, "daemon"), "--state-dir", stateDir(`daemon-${n++}`), "--sandbox-pool", "0", "--log-level", "warn"], /mini-agent-daemon ready /),
      });
      if (spawnSync("redis-server", ["--version"]).status !== 0) notes.push("no redis-server on PATH: the worker start to ready was not timed");
      else {
        const redis = await startRedis(path.join(root, "redis"));
        stops.push(() => redis.stop());
        cases.push({
          name: "worker to ready",
          run: (t) =>
            cpuToReady(
              [...bin(t, "worker"), ...redis.queueArgs, "--state-dir", stateDir(`worker-${n++}`), "--worker-id", `bench-${n}`],
              /mini-agent-worker ready /,
            ),
        });
      }
    }
    const cpu = new Map(cases.map((c) => [c.name, { tsx: [] as number[], tsc: [] as number[], bundle: [] as number[] }]));
    for (const c of cases) for (const t of TREES) await c.run(t); // warm-up: the page cache, not the program
    for (let i = 0; i < o.runs; i++) for (const c of cases) for (const t of TREES) cpu.get(c.name)![t].push(await c.run(t));

    const w = Math.max(...cases.map((c) => c.name.length)) + 2;
    const col = (s: string) => s.padStart(12);
    const lines = [
      `start-up CPU (user+sys ms, median of ${o.runs} runs; /proc counts 10 ms ticks)`,
      `${"".padEnd(w)}${col("tsx source")}${col("tsc output")}${col("bundle")}${col("tsc/bundle")}${col("tsx/bundle")}`,
    ];
    for (const c of cases) {
      const m = cpu.get(c.name)!;
      const [x, y, z] = TREES.map((t) => median(m[t]));
      lines.push(`${c.name.padEnd(w)}${col(String(x))}${col(String(y))}${col(String(z))}${col((y! / z!).toFixed(2))}${col((x! / z!).toFixed(2))}`);
    }
    lines.push(`bundled entries: ${ENTRIES.map((e) => e.source).join(", ")}`);
    lines.push(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
    for (const n of notes) lines.push(`note: ${n}`);
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    for (const stop of stops) await stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`bench failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);

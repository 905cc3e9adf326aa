import { spawnSync } from "node:child_process";
import { startDaemon as startKitDaemon } from "./bench-eval-kit.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * `npm run bench:client [-- --runs N]`
 * Every approval and status is one client process, so its start-up is what a
 * user waits for (issue 10 item 16: ~5.9x `node -e 0` with undici and zod).
 * In ONE run, interleaved so that load from other processes hits both alike:
 * the median wall time of `node -e 0` and of the built client's `list --json`
 * against a real daemon on a temp state dir, and their ratio. Target <= 2x.
 * A benchmark that prints numbers, never a timed test.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { bin: Record<string, string> };
const CLIENT = path.join(REPO, pkg.bin["mini-agent-client"]!);
const DAEMON = path.join(REPO, pkg.bin["mini-agent-daemon"]!);

function parseArgs(argv: string[]) {
  const o = { runs: 21 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else throw new Error(`unknown option ${a}; use --runs N`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be a positive integer");
  return o;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * CPU time (user + system) of this process's waited-for children, in ms, from
 * /proc (Linux); null elsewhere. Less disturbed than wall time when other work
 * shares the cores, so it is printed beside it.
 */
function childCpuMs(): number | null {
  try {
    // fields after the ")" that ends the command name: cutime and cstime are the 14th and 15th
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[13]) + Number(f[14])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** Wall and CPU time of one process, start to exit; a failing command fails the bench (a fast error is no result). */
function timed(argv: string[]): { wall: number; cpu: number | null } {
  const cpu0 = childCpuMs();
  const t = performance.now();
  const r = spawnSync(process.execPath, argv, { encoding: "utf8", env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" } });
  const wall = performance.now() - t;
  const cpu1 = childCpuMs();
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { wall, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** the daemon on its own state dir, quiet: the kit's one way to start it */
const startDaemon = (stateDir: string) => startKitDaemon(stateDir, { daemonArgs: ["--log-level", "warn"] });

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  for (const bin of [CLIENT, DAEMON]) if (!fs.existsSync(bin)) throw new Error(`${path.relative(REPO, bin)} is missing: run npm run build first`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-client-"));
  const daemon = await startDaemon(path.join(root, "state"));
  try {
    const node = ["-e", "0"];
    const client = [CLIENT, "--socket", daemon.socket, "list", "--json"];
    // one warm-up each: the first spawn pays for the page cache, not for the client
    timed(node);
    timed(client);
    const wall = { node_e_0: [] as number[], client_list_json: [] as number[] };
    const cpu = { node_e_0: [] as number[], client_list_json: [] as number[] };
    for (let i = 0; i < o.runs; i++) {
      for (const [name, argv] of [
        ["node_e_0", node],
        ["client_list_json", client],
      ] as const) {
        const t = timed(argv);
        wall[name].push(t.wall);
        if (t.cpu !== null) cpu[name].push(t.cpu);
      }
    }
    const haveCpu = cpu.node_e_0.length === o.runs && cpu.client_list_json.length === o.runs;
    const out = {
      client: path.relative(REPO, CLIENT),
      runs: o.runs,
      median_ms: { node_e_0: Math.round(median(wall.node_e_0)), client_list_json: Math.round(median(wall.client_list_json)) },
      ratio_client_over_node: +(median(wall.client_list_json) / median(wall.node_e_0)).toFixed(2),
      target_ratio: 2,
      // the mean over all runs: /proc counts CPU time in 10 ms ticks, too coarse for one run
      ...(haveCpu && {
        cpu_mean_ms: { node_e_0: Math.round(sum(cpu.node_e_0) / o.runs), client_list_json: Math.round(sum(cpu.client_list_json) / o.runs) },
        cpu_ratio_client_over_node: +(sum(cpu.client_list_json) / Math.max(1, sum(cpu.node_e_0))).toFixed(2),
      }),
      load_average: os.loadavg().map((l) => +l.toFixed(2)),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return 0;
  } finally {
    await daemon.stop();
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

import { spawnSync } from "node:child_process";
import { startDaemon as startKitDaemon } from "./bench-eval-kit.js";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/**
 * `npm run bench:mcp [-- --runs N] [-- --image-lock FILE]` (after `npm run build`)
 * sandbox_run_tests on the linkcheck fixture through `mini-agent-client mcp`
 * (the official SDK Client over stdio) against the same check through the
 * daemon's API directly (POST /v1/checks/tests on its socket), interleaved in
 * ONE run so that load from other processes hits both alike: medians and their
 * ratio (target <= 1.2x), plus the MCP server's start-up (spawn to a listed
 * tool set). The isolation report is made first with `probe`, as a user would.
 * A benchmark that prints numbers, never a timed test.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { bin: Record<string, string> };
const CLIENT = path.join(REPO, pkg.bin["mini-agent-client"]!);
const DAEMON = path.join(REPO, pkg.bin["mini-agent-daemon"]!);
const TEST_CMD = "node --test tests/";

function parseArgs(argv: string[]) {
  const o = { runs: 7, imageLock: process.env.MINI_AGENT_TEST_IMAGE_LOCK ?? "" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--image-lock") o.imageLock = argv[++i] ?? "";
    else throw new Error(`unknown option ${a}; use --runs N or --image-lock FILE`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be a positive integer");
  if (!o.imageLock || !fs.existsSync(o.imageLock))
    throw new Error("give the pinned sandbox image lock: --image-lock FILE (or MINI_AGENT_TEST_IMAGE_LOCK); `npm run image:build` writes one");
  if (!fs.existsSync(CLIENT) || !fs.existsSync(DAEMON)) throw new Error("run `npm run build` first: the bench times the built bins");
  return o;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** the daemon on its own state dir, quiet: the kit's one way to start it */
const startDaemon = (stateDir: string) => startKitDaemon(stateDir, { daemonArgs: ["--log-level", "warn"] });

/** the daemon's API directly: one POST on its socket, what the MCP tool turns into */
function direct(socket: string, workspace: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ workspace, test: TEST_CMD });
    const req = http.request(
      {
        socketPath: socket,
        method: "POST",
        path: "/v1/checks/tests",
        headers: { host: "mini-agent", "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () =>
          res.statusCode === 200 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`HTTP ${res.statusCode}: ${text}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function mcpTransport(socket: string, workspace: string) {
  return new StdioClientTransport({
    command: process.execPath,
    args: [CLIENT, "mcp", "--socket", socket, "--workspace", workspace],
    env: { PATH: process.env.PATH ?? "" },
    stderr: "ignore",
  });
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-mcp-"));
  const stateDir = path.join(root, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  fs.copyFileSync(o.imageLock, path.join(stateDir, "sandbox-image.lock.json"));
  const workspace = path.join(root, "linkcheck");
  fs.cpSync(path.join(REPO, "fixtures/linkcheck/repo"), workspace, { recursive: true });
  const daemon = await startDaemon(stateDir);
  try {
    const probe = spawnSync(process.execPath, [CLIENT, "probe", "--socket", daemon.socket], { encoding: "utf8" });
    if (probe.status !== 0) throw new Error(`probe failed (${probe.status}): ${probe.stderr}`);

    const startup: number[] = [];
    for (let i = 0; i < o.runs; i++) {
      const t = performance.now();
      const c = new Client({ name: "bench-mcp", version: "1.0.0" });
      await c.connect(mcpTransport(daemon.socket, workspace));
      await c.listTools();
      startup.push(performance.now() - t);
      await c.close();
    }

    const client = new Client({ name: "bench-mcp", version: "1.0.0" });
    await client.connect(mcpTransport(daemon.socket, workspace));
    // one of each first, untimed: the pool and the engine's caches warm for both paths alike
    await direct(daemon.socket, workspace);
    await client.callTool({ name: "sandbox_run_tests", arguments: { test: TEST_CMD } });
    const viaApi: number[] = [];
    const viaMcp: number[] = [];
    for (let i = 0; i < o.runs; i++) {
      let t = performance.now();
      const a = await direct(daemon.socket, workspace);
      viaApi.push(performance.now() - t);
      t = performance.now();
      const m = (await client.callTool({ name: "sandbox_run_tests", arguments: { test: TEST_CMD } })) as { structuredContent?: Record<string, unknown> };
      viaMcp.push(performance.now() - t);
      // both must have run the same tests to the same verdict, or the times compare nothing
      if (a.green !== true || m.structuredContent?.green !== true) throw new Error("the linkcheck tests were expected green on both paths");
    }
    await client.close();
    const r = (x: number) => Math.round(x);
    process.stdout.write(
      JSON.stringify(
        {
          runs: o.runs,
          sandbox_run_tests_ms: {
            daemon_api_median: r(median(viaApi)),
            mcp_median: r(median(viaMcp)),
            ratio: Number((median(viaMcp) / median(viaApi)).toFixed(3)),
          },
          mcp_startup_ms: { median: r(median(startup)), min: r(Math.min(...startup)), max: r(Math.max(...startup)) },
          target: "mcp/api ratio <= 1.2",
        },
        null,
        2,
      ) + "\n",
    );
  } finally {
    await daemon.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-mcp: ${(err as Error).message}\n`);
  process.exitCode = 1;
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent, request } from "undici";
import { procKb, REPO, requireFreshBins, startDaemon } from "./bench-eval-kit.js";

/**
 * `npm run bench:workspace [-- --files 10000,100000] [--reps 3] [--bytes 200]`
 * What creating a run costs the daemon as the workspace grows in file count:
 * for each count, a workspace of that many small files (100 per folder), a
 * fresh daemon (so VmHWM is this create's alone) with the copy limits raised
 * past it, and a create-run (host backend, trusted replay: the figures are
 * the size check, the baseline copy and the manifest, not Docker). While the
 * create is in flight, GET /v1/health is sent one request after another.
 * Prints, per count, the medians over the repetitions of: the create's time,
 * the daemon's peak RSS (VmHWM) when it answered, its RSS 2 s later, and the
 * health latency (median and max) during the create, side by side.
 * Never a timed test: the figures depend on the machine and its load.
 */
const LINKCHECK = path.join(REPO, "fixtures", "linkcheck");

function parseArgs(argv: string[]) {
  const o = { files: [10_000, 100_000], reps: 3, bytes: 200 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[++i] ?? "";
    if (a === "--files") o.files = v.split(",").map(Number);
    else if (a === "--reps") o.reps = Number(v);
    else if (a === "--bytes") o.bytes = Number(v);
    else throw new Error(`unknown option ${a}; use --files N[,N...], --reps R, --bytes B`);
  }
  if (![o.reps, o.bytes, ...o.files].every((n) => Number.isInteger(n) && n >= 1)) throw new Error("--files, --reps and --bytes take positive integers");
  return o;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** linkcheck's repo plus `bulk/dNNN/fNNNNN.txt`, 100 files per folder */
function makeWorkspace(dir: string, files: number, bytes: number): void {
  fs.cpSync(path.join(LINKCHECK, "repo"), dir, { recursive: true });
  const body = "x".repeat(bytes);
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, "bulk", `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `f${i}.txt`), body);
  }
}

interface Sample {
  create_ms: number;
  status: number;
  hwm_mb: number;
  rss_after_mb: number;
  health_median_ms: number;
  health_max_ms: number;
  health_requests: number;
}

async function once(workspace: string, stateDir: string, files: number): Promise<Sample> {
  const daemon = await startDaemon(stateDir, { daemonArgs: ["--max-workspace-files", String(files * 2), "--max-workspace-bytes", "8G"] });
  // a create over 100,000 files may take minutes: no header or body timeout cuts it short
  const agent = new Agent({ connect: { socketPath: daemon.socket }, connections: 4, headersTimeout: 0, bodyTimeout: 0 });
  const call = async (method: "GET" | "POST", url: string, body?: unknown) => {
    const res = await request(`http://localhost${url}`, {
      method,
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  try {
    await call("GET", "/v1/health"); // the first asks the engine for everything once
    const task = JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8"));
    let done = false;
    const t0 = performance.now();
    const create = call("POST", "/v1/runs", {
      workspace,
      task_spec: task,
      control_dir: path.join(LINKCHECK, "control"),
      replay_path: path.join(LINKCHECK, "replay.json"),
      trust_replay_file: true,
      backend: "trusted_local",
    }).finally(() => (done = true));
    const health: number[] = [];
    while (!done) {
      const s = performance.now();
      await call("GET", "/v1/health");
      health.push(performance.now() - s);
    }
    const created = await create;
    const createMs = performance.now() - t0;
    if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text}`);
    const hwm = procKb(daemon.pid, "VmHWM") ?? 0;
    const runId = (JSON.parse(created.text) as { run: { run_id: string } }).run.run_id;
    await call("POST", `/v1/runs/${runId}/cancel`);
    await new Promise((r) => setTimeout(r, 2000));
    const rss = procKb(daemon.pid, "VmRSS") ?? 0;
    return {
      create_ms: Math.round(createMs),
      status: created.status,
      hwm_mb: Math.round(hwm / 1024),
      rss_after_mb: Math.round(rss / 1024),
      health_median_ms: health.length ? +median(health).toFixed(1) : 0,
      health_max_ms: health.length ? +Math.max(...health).toFixed(1) : 0,
      health_requests: health.length,
    };
  } finally {
    await agent.close();
    await daemon.stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  requireFreshBins();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-workspace-"));
  const rows: Record<string, unknown>[] = [];
  try {
    for (const files of o.files) {
      const workspace = path.join(root, `ws-${files}`);
      makeWorkspace(workspace, files, o.bytes);
      const samples: Sample[] = [];
      for (let r = 0; r < o.reps; r++) {
        const stateDir = path.join(root, `state-${files}-${r}`);
        samples.push(await once(workspace, stateDir, files));
        fs.rmSync(stateDir, { recursive: true, force: true });
        process.stderr.write(`${files} files, repetition ${r + 1}/${o.reps}: ${JSON.stringify(samples.at(-1))}\n`);
      }
      const med = (k: keyof Sample) => median(samples.map((s) => s[k]));
      rows.push({
        files,
        create_s: +(med("create_ms") / 1000).toFixed(2),
        daemon_vmhwm_mb: med("hwm_mb"),
        daemon_rss_2s_after_mb: med("rss_after_mb"),
        health_median_ms: med("health_median_ms"),
        health_max_ms: med("health_max_ms"),
      });
      fs.rmSync(workspace, { recursive: true, force: true });
    }
    process.stdout.write(`medians of ${o.reps} repetition(s), ${o.bytes}-byte files, bins: ${fs.existsSync(path.join(REPO, "dist")) ? "dist/" : "tsx"}\n`);
    console.table(rows);
    process.stdout.write(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}\n`,
    );
    return 0;
  } finally {
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

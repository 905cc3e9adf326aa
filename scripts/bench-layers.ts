import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DependencyLayers } from "../daemon/src/sandbox/dependency-layer.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { hostInstallTools } from "../daemon/src/sandbox/install-sandbox.js";
import { captureBaseline } from "../daemon/src/workspace/index.js";
import { benchInstallLayer } from "./bench-install-layer.js";

/**
 * `npm run bench:layers [-- --runs N] [--mib M] [--lock PATH]`
 * In ONE run, side by side: the median wall time of a fresh sandbox running
 * the same command on a project with an M MiB node_modules (as a read-only
 * dependency layer) and on the same project without dependencies (target:
 * <= 1.2x); the layer's first build; re-keying the unchanged folder at run
 * creation with its stat index and by a full re-hash; and the state-dir growth of one run's
 * baseline (target: <= 5 MB). A benchmark that prints numbers, never a timed test.
 * `--install [--packages N]`: also the first build of an M MiB layer made by the
 * install sandbox (bench-install-layer.ts), and a fresh sandbox mounting it.
 */
function parseArgs(argv: string[]) {
  const o = {
    runs: 7,
    mib: 150,
    install: false,
    packages: 30,
    lock: process.env.MINI_AGENT_TEST_IMAGE_LOCK ?? path.join(os.homedir(), ".local/state/mini-agent/sandbox-image.lock.json"),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--mib") o.mib = Number(argv[++i]);
    else if (a === "--lock") o.lock = path.resolve(argv[++i]!);
    else if (a === "--install") o.install = true;
    else if (a === "--packages") o.packages = Number(argv[++i]);
    else throw new Error(`unknown option ${a} (known: --runs N, --mib M, --lock PATH, --install, --packages N)`);
  }
  return o;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function du(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += fs.statSync(path.join(e.parentPath, e.name)).size;
  return n;
}

function project(dir: string, mib: number): void {
  fs.mkdirSync(path.join(dir, "src"), { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "bench", scripts: { test: "node --test" } }));
  fs.writeFileSync(path.join(dir, "package-lock.json"), '{"lockfileVersion":3}\n');
  fs.writeFileSync(path.join(dir, "src/index.js"), "module.exports = 1;\n");
  // a few thousand files of 50 KiB, like a real node_modules' spread
  const per = 50 * 1024;
  const count = Math.ceil((mib * 1024 * 1024) / per);
  for (let i = 0; i < count; i++) {
    const d = path.join(dir, "node_modules", `pkg${i % 400}`);
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, `f${i}.js`), crypto.randomBytes(per));
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const docker = createDockerClient(process.env);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-layers-"));
  const instance = crypto.randomBytes(8).toString("hex");
  const layersDir = path.join(root, "state/layers");
  const layers = new DependencyLayers({ docker, dir: layersDir, instance });
  const installTools = o.install ? hostInstallTools(process.execPath, undefined) : null;
  if (o.install && !installTools) throw new Error("--install needs the host's npm beside this node and /bin/sh");
  const ex = new DockerExecutor({ lockPath: o.lock, docker, layers, config: { instance }, ...(installTools && { installTools }) });
  const withDeps = path.join(root, "with-deps");
  const without = path.join(root, "without-deps");
  project(withDeps, o.mib);
  project(without, 0);
  const spec = { forbidden: [], include: [] };
  try {
    const t = performance.now();
    const refs = await ex.prepareLayers(withDeps, spec);
    const firstBuild = performance.now() - t;
    // run creation on an unchanged folder, keyed with its stat index and (its index removed) by reading it whole;
    // once first, as a run right after an install is: files written in the last seconds are read again (racily clean)
    const timed = async (whole: boolean) => {
      if (whole) for (const n of fs.readdirSync(layersDir)) if (n.startsWith("stat-")) fs.rmSync(path.join(layersDir, n));
      const s = performance.now();
      await ex.prepareLayers(withDeps, spec);
      return performance.now() - s;
    };
    const afterBuild = await timed(false);
    // past the racily-clean line (RACY_NS) of every file the project wrote, however quick the build was
    await new Promise((r) => setTimeout(r, 2_500));
    const indexed: number[] = [];
    const whole: number[] = [];
    for (let i = 0; i < o.runs; i++) {
      whole.push(await timed(true));
      indexed.push(await timed(false));
    }
    const argv = ["node", "-e", "require('fs').readdirSync('/workspace/src')"];
    const fresh = async (ws: string, l: typeof refs) => {
      const s = performance.now();
      const r = await ex.run({ runId: "bench-layers", purpose: "bench", argv, workspaceDir: ws, exportSpec: { ...spec, layers: l }, timeoutMs: 120_000 });
      if (r.exit_code !== 0) throw new Error(`bench command failed: ${r.stderr}`);
      return performance.now() - s;
    };
    await fresh(without, []); // warm the engine's image cache once
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < o.runs; i++) {
      a.push(await fresh(withDeps, refs));
      b.push(await fresh(without, []));
    }
    const control = path.join(root, "control");
    await captureBaseline(withDeps, control);
    const baseline = du(control);
    const ratio = median(a) / median(b);
    console.log(`node_modules ${o.mib} MiB, ${o.runs} runs each (medians)`);
    console.log(`  fresh sandbox, with the layer:     ${median(a).toFixed(0)} ms`);
    console.log(`  fresh sandbox, no dependencies:    ${median(b).toFixed(0)} ms`);
    console.log(`  ratio:                             ${ratio.toFixed(2)}x (target <= 1.2x)`);
    console.log(`  first layer build:                 ${(firstBuild / 1000).toFixed(1)} s (key + tar into the volume)`);
    console.log(`  layer reuse at run creation, re-keying the folder (medians):`);
    console.log(`    with its stat index:             ${median(indexed).toFixed(0)} ms`);
    console.log(`    full re-hash (no index):         ${median(whole).toFixed(0)} ms (${(median(whole) / median(indexed)).toFixed(1)}x)`);
    console.log(`    right after the first build:     ${afterBuild.toFixed(0)} ms (files written in the seconds before are read again)`);
    console.log(`  state-dir growth (one baseline):   ${(baseline / 1e6).toFixed(3)} MB (target <= 5 MB)`);
    if (o.install) {
      const { figure, workspace } = await benchInstallLayer(ex, root, o.mib, o.packages);
      console.log(`install sandbox: npm install of ${figure.packages} packages, ${(figure.tarballBytes / 2 ** 20).toFixed(0)} MiB of tarballs, from 127.0.0.1`);
      console.log(`  first layer build (install + layer): ${(figure.installMs / 1000).toFixed(1)} s, exit ${figure.exitCode}`);
      if (figure.layerBytes === null) console.log(`  no layer: ${figure.stderrTail.trim().split("\n").slice(-3).join(" | ")}`);
      else {
        const installed = await ex.prepareLayers(workspace, spec);
        const c: number[] = [];
        for (let i = 0; i < o.runs; i++) c.push(await fresh(workspace, installed));
        console.log(`  layer size:                          ${(figure.layerBytes / 2 ** 20).toFixed(0)} MiB`);
        console.log(`  fresh sandbox, with that layer:      ${median(c).toFixed(0)} ms (${(median(c) / median(b)).toFixed(2)}x no dependencies)`);
      }
    }
  } finally {
    for (const l of await layers.list()) await layers.remove(l.key).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`bench:layers: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { instanceIdFor } from "../daemon/src/config/state-dir.js";
import { EvalReport } from "../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, PURPOSE_LABEL } from "../daemon/src/sandbox/labels.js";
import { bin, built, machineCpu, requireFreshBins, pinImages, run, startDaemon, suiteDir, TICK } from "./bench-eval-kit.js";

/**
 * `npm run bench:eval-cpu [-- --suite DIR] [--concurrency N] [--image-lock FILE] [--idle-s S] [--cpu-prof DIR] [--daemon-arg ARG]...`
 * Where the CPU of an eval run goes, per case: runs the suite once (default
 * concurrency 1) against a daemon of its own and samples, every 100 ms, the
 * CPU seconds (user+sys, from /proc/PID/stat and cgroup v1 cpuacct) of the
 * daemon, the `eval run` client, dockerd, containerd, the containerd shims of
 * this daemon's containers (with the runc processes they reaped), and those
 * containers' own cgroups; plus the machine's busy CPU (/proc/stat).
 * dockerd and containerd are shared with everyone on the engine: their rate
 * over --idle-s seconds before the run (default 10) is subtracted as background.
 * Model: C = the CPU per case, W = wall per case at c1; the 2 cores allow c2
 * at best min(2, 2W/C) times c1 (c1 leaves (1 - C/2W) of the machine idle).
 * Short-lived processes are sampled, not accounted at exit: a shim's last
 * <100 ms is missed, so the shim figure is a slight underestimate.
 */
const SAMPLE_MS = 100;

interface Options {
  suite: string | null;
  imageLock: string | null;
  concurrency: number;
  idleS: number;
  cpuProf: string | null;
  daemonArgs: string[];
}

function parseArgs(argv: string[]): Options {
  const o: Options = { suite: null, imageLock: null, concurrency: 1, idleS: 10, cpuProf: null, daemonArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--suite") o.suite = path.resolve(argv[++i] ?? "");
    else if (a === "--image-lock") o.imageLock = path.resolve(argv[++i] ?? "");
    else if (a === "--concurrency") o.concurrency = Number(argv[++i]);
    else if (a === "--idle-s") o.idleS = Number(argv[++i]);
    else if (a === "--cpu-prof") o.cpuProf = path.resolve(argv[++i] ?? "");
    else if (a === "--daemon-arg") o.daemonArgs.push(argv[++i] ?? "");
    else throw new Error(`unknown option ${a}; use --suite DIR, --concurrency N, --image-lock FILE, --idle-s S, --cpu-prof DIR, --daemon-arg ARG`);
  }
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1 || o.concurrency > 16) throw new Error("--concurrency: a whole number from 1 to 16");
  if (!Number.isFinite(o.idleS) || o.idleS < 0) throw new Error("--idle-s: seconds >= 0");
  return o;
}

/** utime+stime (self) and cutime+cstime (reaped children) of a process in seconds; null once it is gone. */
function procCpu(pid: number): { self: number; children: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after the ")" of comm: state is field 3; utime 14, stime 15, cutime 16, cstime 17
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const n = (i: number) => Number(f[i - 3]);
    return { self: (n(14) + n(15)) / TICK, children: (n(16) + n(17)) / TICK };
  } catch {
    return null;
  }
}

function pidsByComm(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const e of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const comm = fs.readFileSync(`/proc/${e}/comm`, "utf8").trim();
      out.set(comm, [...(out.get(comm) ?? []), Number(e)]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function shimContainerId(pid: number): string | null {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const i = argv.indexOf("-id");
    return i >= 0 ? (argv[i + 1] ?? null) : null;
  } catch {
    return null;
  }
}

const CGROUP = "/sys/fs/cgroup/cpuacct/docker";
function containerCpu(id: string): number | null {
  try {
    return Number(fs.readFileSync(path.join(CGROUP, id, "cpuacct.usage"), "utf8")) / 1e9;
  } catch {
    return null;
  }
}

/** Which containers are this daemon's (by its instance label), and their purpose; one inspect per container id. */
function makeOwnership(docker: Docker, instance: string) {
  const known = new Map<string, Promise<string | null>>();
  return (id: string): Promise<string | null> => {
    let p = known.get(id);
    if (!p) {
      p = docker
        .getContainer(id)
        .inspect()
        .then((i) => (i.Config.Labels?.[INSTANCE_LABEL] === instance ? (i.Config.Labels?.[PURPOSE_LABEL] ?? "unlabelled") : null))
        .catch(() => null);
      known.set(id, p);
    }
    return p;
  };
}

interface Totals {
  daemon: number;
  daemonChildren: number;
  client: number;
  dockerd: number;
  containerd: number;
  shims: number;
  containers: number;
  machineBusy: number;
  wall: number;
  containerCount: number;
  byPurpose: Map<string, number>;
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  requireFreshBins();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-eval-cpu-"));
  const docker = createDockerClient(process.env);
  let stop: (() => Promise<void>) | null = null;
  try {
    const suite = suiteDir(o.suite, root);
    const stateDir = path.join(root, "state");
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    await pinImages(docker, stateDir, o.imageLock);
    const nodeFlags = o.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${o.cpuProf}`] : [];
    const d = await startDaemon(stateDir, { nodeFlags, daemonArgs: o.daemonArgs });
    stop = d.stop;
    const owner = makeOwnership(docker, instanceIdFor(stateDir));
    const comm = pidsByComm();
    const dockerd = comm.get("dockerd")?.[0];
    const containerd = comm.get("containerd")?.[0];
    const shared = () => ({ dockerd: dockerd ? (procCpu(dockerd)?.self ?? 0) : 0, containerd: containerd ? (procCpu(containerd)?.self ?? 0) : 0 });

    // background: what the shared engine spends while this daemon does nothing
    const idle0 = { ...shared(), m: machineCpu(), t: performance.now() };
    await new Promise((r) => setTimeout(r, o.idleS * 1000));
    const idle1 = { ...shared(), m: machineCpu(), t: performance.now() };
    const idleS = (idle1.t - idle0.t) / 1000 || 1;
    const bg = {
      dockerd: (idle1.dockerd - idle0.dockerd) / idleS,
      containerd: (idle1.containerd - idle0.containerd) / idleS,
      machine: (idle1.m.busy - idle0.m.busy) / idleS,
    };

    const shimSeen = new Map<number, { first: number; last: number; id: string }>();
    const boxSeen = new Map<string, number>();
    const d0 = procCpu(d.pid)!;
    const s0 = shared();
    const m0 = machineCpu();
    let clientPid: number | null = null;
    let clientLast = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if (clientPid !== null) clientLast = Math.max(clientLast, procCpu(clientPid)?.self ?? 0);
        for (const pid of pidsByComm().get("containerd-shim") ?? []) {
          const id = shimContainerId(pid);
          const cpu = procCpu(pid);
          if (!id || !cpu) continue;
          if ((await owner(id)) === null) continue;
          const total = cpu.self + cpu.children;
          const seen = shimSeen.get(pid);
          // a shim first seen already running: count from the first sample (0 at birth is what it had then)
          if (seen) seen.last = total;
          else shimSeen.set(pid, { first: 0, last: total, id });
        }
        if (fs.existsSync(CGROUP)) {
          for (const id of fs.readdirSync(CGROUP)) {
            if (!/^[0-9a-f]{64}$/.test(id)) continue;
            const cpu = containerCpu(id);
            if (cpu === null || (await owner(id)) === null) continue;
            boxSeen.set(id, Math.max(boxSeen.get(id) ?? 0, cpu));
          }
        }
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
      }
    })();
    const out = path.join(root, "out");
    const selfBefore = procCpu(process.pid)!.children;
    process.stderr.write(`eval run at concurrency ${o.concurrency} (sampling CPU)...\n`);
    const t0 = performance.now();
    const r = await run(
      [...bin("client"), "eval", "run", suite, "--output", out, "--concurrency", String(o.concurrency), "--json", "--socket", d.socket],
      (pid) => {
        clientPid = pid;
      },
    );
    const wall = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    // the client was reaped by this process: its whole CPU is in our cutime now
    const clientCpu = Math.max(clientLast, procCpu(process.pid)!.children - selfBefore);
    const d1 = procCpu(d.pid)!;
    const s1 = shared();
    const m1 = machineCpu();
    if (!fs.existsSync(path.join(out, "eval-report.json"))) throw new Error(`eval run wrote no report (exit ${r.code}):\n${r.stderr}`);
    const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
    const cases = report.aggregates.cases;
    const byPurpose = new Map<string, number>();
    for (const id of boxSeen.keys()) {
      const p = (await owner(id)) ?? "?";
      byPurpose.set(p, (byPurpose.get(p) ?? 0) + 1);
    }
    const t: Totals = {
      daemon: d1.self - d0.self,
      daemonChildren: d1.children - d0.children,
      client: clientCpu,
      dockerd: Math.max(0, s1.dockerd - s0.dockerd - bg.dockerd * wall),
      containerd: Math.max(0, s1.containerd - s0.containerd - bg.containerd * wall),
      shims: [...shimSeen.values()].reduce((a, s) => a + (s.last - s.first), 0),
      containers: [...boxSeen.values()].reduce((a, b) => a + b, 0),
      machineBusy: m1.busy - m0.busy - bg.machine * wall,
      wall,
      containerCount: boxSeen.size,
      byPurpose,
    };
    await d.stop();
    stop = null;
    print(t, cases, report.aggregates.passed, o, bg, suite);
    // the order the runner took them in, with each case's own wall time: a long case started last leaves a worker idle
    process.stdout.write(`per case (s): ${report.cases.map((c) => `${c.id} ${(c.wall_ms / 1000).toFixed(1)}`).join(", ")}\n`);
    return r.code === 0 ? 0 : 1;
  } finally {
    if (stop) await stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function print(t: Totals, cases: number, passed: number, o: Options, bg: { dockerd: number; containerd: number; machine: number }, suite: string) {
  const per = (x: number) => x / Math.max(1, cases);
  const rows: Array<[string, number]> = [
    ["daemon (node)", t.daemon],
    ["daemon's reaped children", t.daemonChildren],
    ["eval run client (node)", t.client],
    ["dockerd (minus background)", t.dockerd],
    ["containerd (minus background)", t.containerd],
    ["containerd shims + runc", t.shims],
    ["sandbox containers (cgroups)", t.containers],
  ];
  const sum = rows.reduce((a, [, v]) => a + v, 0);
  const W = per(t.wall);
  const C = per(sum);
  const lines = [
    `bench:eval-cpu  suite ${suite} (${cases} cases, ${passed} passed), concurrency ${o.concurrency}, ${os.cpus().length} cores, bins from ${built ? "dist/" : "tsx"}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
    `background while idle (${o.idleS} s, subtracted): dockerd ${bg.dockerd.toFixed(3)} cpu-s/s, containerd ${bg.containerd.toFixed(3)} cpu-s/s, machine ${bg.machine.toFixed(3)} cpu-s/s`,
    "process                            CPU s total   CPU s/case   share",
    ...rows.map(
      ([k, v]) => `${k.padEnd(34)} ${v.toFixed(2).padStart(11)}  ${per(v).toFixed(3).padStart(11)}  ${((100 * v) / (sum || 1)).toFixed(1).padStart(5)}%`,
    ),
    `${"sum C".padEnd(34)} ${sum.toFixed(2).padStart(11)}  ${C.toFixed(3).padStart(11)}`,
    `${"machine busy (minus background)".padEnd(34)} ${t.machineBusy.toFixed(2).padStart(11)}  ${per(t.machineBusy).toFixed(3).padStart(11)}`,
    `${"wall W".padEnd(34)} ${t.wall.toFixed(2).padStart(11)}  ${W.toFixed(3).padStart(11)}`,
    `containers of this daemon: ${t.containerCount} (${(t.containerCount / Math.max(1, cases)).toFixed(1)}/case; ${[...t.byPurpose].map(([k, v]) => `${k} ${v}`).join(", ")})`,
    `model: at concurrency ${o.concurrency} the run used ${((100 * C) / W / os.cpus().length).toFixed(0)}% of ${os.cpus().length} cores (idle ${(100 - (100 * C) / W / os.cpus().length).toFixed(0)}%);` +
      (o.concurrency === 1 ? ` CPU alone caps c2/c1 at min(2, 2W/C) = ${Math.min(2, (2 * W) / (C || 1)).toFixed(2)}x` : ""),
    "",
    JSON.stringify({
      suite,
      cases,
      concurrency: o.concurrency,
      per_case_s: Object.fromEntries(rows.map(([k, v]) => [k, per(v)])),
      sum_per_case_s: C,
      wall_per_case_s: W,
      machine_busy_per_case_s: per(t.machineBusy),
      containers: t.containerCount,
      background: bg,
    }),
    "",
  ];
  process.stdout.write(lines.join("\n"));
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:eval-cpu: ${(err as Error).message}\n`);
    process.exit(1);
  },
);

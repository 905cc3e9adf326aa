// In-container isolation probe. Baked into the sandbox image and run in a
// FRESH container made by the same code path and HostConfig as candidate
// tests, before any candidate code. It only observes; the host decides.
//
// argv[2]: JSON {nonce, runtime, allowedEnv[], canarySha256, canaryName, hostStateDir}
// stdout: one JSON line {nonce, probes[]}. A self-report can be forged by code
// in the same container (ptrace is allowed by the default seccomp profile),
// which is why it runs first, is bound to the nonce, and host checks rule.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import dns from "node:dns";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const args = JSON.parse(process.argv[2] ?? "{}");
const probes = [];

function add(id, property, expected, observed, passed, doesNotProve) {
  probes.push({ id, property, expected, observed, passed: Boolean(passed), does_not_prove: doesNotProve });
}
function read(p) {
  try {
    return fs.readFileSync(p, "utf8");
  } catch (e) {
    return null;
  }
}
function statusField(name) {
  const m = (read("/proc/self/status") ?? "").match(new RegExp(`^${name}:\\s*(.*)$`, "m"));
  return m ? m[1].trim() : null;
}
function tryWrite(p) {
  try {
    fs.writeFileSync(p, "mini-agent-probe");
    return "written";
  } catch (e) {
    return e.code ?? String(e);
  }
}
function mounts() {
  return (read("/proc/self/mountinfo") ?? "")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [left, right] = line.split(" - ");
      const f = left.split(" ");
      const r = (right ?? "").split(" ");
      return { point: f[4], opts: f[5].split(","), fstype: r[0], superOpts: (r[2] ?? "").split(",") };
    });
}
function safe(fn) {
  return (...a) => {
    try {
      return fn(...a);
    } catch (e) {
      add(fn.name || "probe", "probe ran", "no exception", String(e?.message ?? e), false, "the probe itself failed");
    }
  };
}
// Walks the image (not /proc, /sys, /dev) calling visit(path, lstat).
function walk(dir, visit, depth = 0) {
  if (depth > 40) return;
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const p = path.join(dir, n);
    if (["/proc", "/sys", "/dev"].includes(p)) continue;
    let st;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    visit(p, st);
    if (st.isDirectory()) walk(p, visit, depth + 1);
  }
}

const identity = safe(function identity() {
  const groups = process.getgroups();
  const observed = { uid: process.getuid(), gid: process.getgid(), euid: process.geteuid(), groups };
  add("uid_gid", "runs as a non-root user and group", "uid=gid=65534, no root group", observed,
    observed.uid === 65534 && observed.euid === 65534 && observed.gid === 65534 && !groups.includes(0),
    "that no other process in the container runs as root (see pid_namespace)");
});

const capabilities = safe(function capabilities() {
  const caps = Object.fromEntries(["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"].map((k) => [k, statusField(k)]));
  const zero = (v) => v !== null && /^0+$/.test(v);
  add("capabilities", "no capabilities: effective, permitted and the bounding set are empty", "CapEff=CapPrm=CapBnd=0",
    caps, zero(caps.CapEff) && zero(caps.CapPrm) && zero(caps.CapBnd),
    "CapEff is 0 for any non-root user; only the empty bounding set proves CapDrop ALL");
});

let helperCache;
function helper() {
  if (helperCache === undefined) {
    try {
      helperCache = JSON.parse(execFileSync("/opt/mini-agent/syscall-probe", { encoding: "utf8", timeout: 10_000 }));
    } catch (e) {
      helperCache = { error: String(e?.message ?? e) };
    }
  }
  return helperCache;
}

// /proc/self/status where it has the field, else prctl via the static helper (gVisor omits it)
const nnp = safe(function noNewPrivs() {
  const v = statusField("NoNewPrivs");
  const p = helper().no_new_privs;
  add("no_new_privs", "no_new_privs is set", "1", { status: v, prctl: p }, (v ?? String(p)) === "1" && p === 1, "nothing about setuid files (see setuid_files)");
});

const seccompMode = safe(function seccompMode() {
  const v = statusField("Seccomp");
  const p = helper().seccomp_mode;
  add("seccomp_mode", "a seccomp filter is installed", "2", { status: v, prctl: p }, (v ?? String(p)) === "2" && p === 2,
    "which syscalls the filter denies (see seccomp_syscalls); under gVisor it needs runsc --oci-seccomp");
});

const readonlyRoot = safe(function readonlyRoot() {
  const observed = { "/": tryWrite("/probe-write"), "/etc/passwd": tryWrite("/etc/passwd"), "/usr/bin/x": tryWrite("/usr/bin/probe-write") };
  const root = mounts().find((m) => m.point === "/");
  add("readonly_rootfs", "the root filesystem is mounted read-only", "/ mounted ro, writes fail with EROFS",
    { ...observed, root_mount_opts: root?.opts }, root?.opts.includes("ro") && Object.values(observed).every((v) => v !== "written"),
    "read-only volumes or tmpfs mounted elsewhere (see writable_mounts)");
});

const writableMounts = safe(function writableMounts() {
  const rw = mounts().filter((m) => m.opts.includes("rw"));
  const userWritable = rw
    .filter((m) => {
      try {
        fs.accessSync(m.point, fs.constants.W_OK);
        return fs.statSync(m.point).isDirectory();
      } catch {
        return false;
      }
    })
    .map((m) => m.point)
    .sort();
  add("writable_mounts", "the only mounts the sandbox user can write are /tmp and /workspace", ["/tmp", "/workspace"],
    { user_writable: userWritable, rw_mounts: rw.map((m) => `${m.point}(${m.fstype})`) },
    JSON.stringify(userWritable) === JSON.stringify(["/tmp", "/workspace"]),
    "the size caps (see host_inspect) or that root-owned rw mounts stay unwritable without capabilities");
  const tmp = mounts().find((m) => m.point === "/tmp");
  // gVisor's mountinfo shows only noexec of the three flags it was given
  const flags = args.runtime === "runsc" ? ["noexec"] : ["nosuid", "nodev", "noexec"];
  add("tmp_mount", "/tmp is a size-capped tmpfs with nosuid,nodev,noexec", "tmpfs nosuid,nodev,noexec size=...",
    tmp ? { fstype: tmp.fstype, opts: tmp.opts, super: tmp.superOpts } : null,
    tmp && tmp.fstype === "tmpfs" && flags.every((f) => tmp.opts.includes(f)) && tmp.superOpts.some((o) => o.startsWith("size=")),
    args.runtime === "runsc" ? "nosuid/nodev under gVisor (not shown in its mountinfo; requested in HostConfig)" : "the workspace size cap (host_inspect checks the volume options)");
});

const controlReadonly = safe(function controlReadonly() {
  if (!fs.existsSync("/control")) return;
  const observed = { dir: tryWrite("/control/probe-write"), files: fs.readdirSync("/control").map((n) => tryWrite(path.join("/control", n))) };
  add("control_readonly", "control assets cannot be changed by the sandbox user", "EACCES/EROFS on every write",
    observed, observed.dir !== "written" && observed.files.every((v) => v !== "written"), "that control assets are hidden from the candidate (they are only given to fresh verifier runs)");
});

const procSys = safe(function procSys() {
  const m = mounts();
  const sys = m.find((x) => x.point === "/sys");
  const procsys = m.find((x) => x.point === "/proc/sys");
  const observed = {
    sys_opts: sys?.opts ?? null,
    proc_sys_opts: procsys?.opts ?? null,
    write_proc_sys: tryWrite("/proc/sys/kernel/hostname"),
    write_sys: tryWrite("/sys/kernel/uevent_helper"),
  };
  add("proc_sys_readonly", "/proc/sys and /sys are read-only", "writes fail", observed,
    observed.write_proc_sys !== "written" && observed.write_sys !== "written" && (!sys || sys.opts.includes("ro")),
    "every file below /proc (see proc_protect)");
});

const procProtect = safe(function procProtect() {
  let kcore = "absent";
  try {
    const st = fs.statSync("/proc/kcore");
    const fd = fs.openSync("/proc/kcore", "r");
    const n = fs.readSync(fd, Buffer.alloc(16), 0, 16, 0);
    fs.closeSync(fd);
    kcore = n === 0 ? `masked(size=${st.size},read=0)` : `readable(${n} bytes)`;
  } catch (e) {
    kcore = e.code === "ENOENT" ? "absent" : `masked(${e.code})`;
  }
  const observed = { sysrq_trigger: tryWrite("/proc/sysrq-trigger"), core_pattern: tryWrite("/proc/sys/kernel/core_pattern"), kcore };
  add("proc_protect", "/proc/sysrq-trigger and core_pattern not writable, /proc/kcore masked", "writes fail, kcore unreadable",
    observed, observed.sysrq_trigger !== "written" && observed.core_pattern !== "written" && !kcore.startsWith("readable"),
    "other /proc files not listed here");
});

const network = safe(function network() {
  const ifaces = (read("/proc/net/dev") ?? "").split("\n").slice(2).map((l) => l.split(":")[0].trim()).filter(Boolean);
  const routes = (read("/proc/net/route") ?? "").split("\n").slice(1).filter((l) => l.trim());
  const routes6 = (read("/proc/net/ipv6_route") ?? "").split("\n").filter((l) => l.trim() && !/ lo$/.test(l.trim()));
  const osIfaces = Object.keys(os.networkInterfaces());
  const ok = ifaces.every((i) => i === "lo") && osIfaces.every((i) => i === "lo") && routes.length === 0 && routes6.length === 0;
  add("network_interfaces", "only the loopback interface and an empty route table", "interfaces=[lo], routes=[]",
    { proc_net_dev: ifaces, interfaces: osIfaces, ipv4_routes: routes.length, ipv6_routes: routes6.length }, ok,
    "that no other channel (e.g. a shared socket) exists (see docker_socket)");
  return ok;
});

function outbound(networkOk) {
  if (!networkOk) {
    // never send anything from a sandbox that might have a network
    add("outbound_tcp", "an outbound TCP connect is refused", "ENETUNREACH", "skipped: interface/route check failed", false, "anything, it was not attempted");
    add("dns", "a DNS lookup fails", "error", "skipped: interface/route check failed", false, "anything, it was not attempted");
    return Promise.resolve();
  }
  const tcp = new Promise((resolve) => {
    // 192.0.2.1 is TEST-NET-1; with no route the kernel refuses before any packet exists.
    const s = net.connect({ host: "192.0.2.1", port: 80, timeout: 3000 });
    s.on("connect", () => { s.destroy(); resolve("connected"); });
    s.on("timeout", () => { s.destroy(); resolve("ETIMEDOUT"); });
    s.on("error", (e) => resolve(e.code ?? String(e)));
  }).then((obs) => add("outbound_tcp", "an outbound TCP connect is refused", "ENETUNREACH (or another error, never connected)", obs,
    obs !== "connected", "that raw sockets or other protocols are blocked (no interface or route exists for them either)"));
  const lookup = new Promise((resolve) => {
    const r = new dns.Resolver({ timeout: 2000, tries: 1 });
    r.resolve4("example.com", (err, addrs) => resolve(err ? err.code ?? String(err) : `resolved:${addrs.join(",")}`));
  }).then((obs) => add("dns", "a DNS lookup fails", "an error code", obs, !String(obs).startsWith("resolved"), "that no resolver cache exists inside (none is in the image)"));
  return Promise.all([tcp, lookup]);
}

const dockerSocket = safe(function dockerSocket() {
  const paths = ["/var/run/docker.sock", "/run/docker.sock", "/var/run/docker", "/run/containerd/containerd.sock", "/var/run/containerd",
    "/run/podman/podman.sock", "/var/run/crio/crio.sock", "/var/lib/docker", "/run/runc"];
  const sockets = [];
  walk("/", (p, st) => { if (st.isSocket()) sockets.push(p); });
  const present = paths.filter((p) => fs.existsSync(p));
  // the spawner's own socket is abstract (no file), so no socket file is expected anywhere (no binds: host_inspect)
  add("docker_socket", "no container-engine socket is reachable", "none of the usual paths exist and no socket file at all",
    { present, sockets }, present.length === 0 && sockets.length === 0,
    "abstract unix sockets other than the spawner's own (the sandbox's network namespace is its own, never the host's)");
});

const environment = safe(function environment() {
  const names = Object.keys(process.env).sort();
  const unexpected = names.filter((n) => !args.allowedEnv.includes(n));
  const hashes = Object.values(process.env).map((v) => crypto.createHash("sha256").update(String(v)).digest("hex"));
  const canary = hashes.includes(args.canarySha256) || names.includes(args.canaryName);
  add("env_allowlist", "the environment holds only allowlisted names and not the host's canary secret", `names within ${JSON.stringify(args.allowedEnv)}; no canary`,
    { names, unexpected, canary_seen: canary }, unexpected.length === 0 && !canary, "that secrets are absent from files (see canary_file)");
});

const canaryFile = safe(function canaryFile() {
  const seen = [];
  walk("/", (p) => { if (path.basename(p) === args.canaryFileName) seen.push(p); });
  const stateVisible = fs.existsSync(args.hostStateDir);
  add("canary_file", "a canary file in the host state dir is not visible", "not found; host state dir absent",
    { found: seen, host_state_dir_visible: stateVisible }, seen.length === 0 && !stateVisible, "that other host paths are hidden (no binds exist: host_inspect)");
});

const pidNamespace = safe(function pidNamespace() {
  const pids = fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number);
  const cmd = (p) => (read(`/proc/${p}/cmdline`) ?? "").split("\0").filter(Boolean).join(" ");
  const ppid = (p) => {
    const stat = read(`/proc/${p}/stat`) ?? "";
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? 0);
  };
  const mine = (p) => {
    for (let q = p, hops = 0; q > 1 && hops < 64; q = ppid(q), hops++) if (q === process.pid) return true;
    return false;
  };
  const list = pids.map((p) => `${p}:${cmd(p)}`);
  // exactly: the init, the spawner under it, this probe and what this probe started; started by a
  // plain `docker exec` (not the daemon's way), also the relay that exec made (its parent is outside)
  const relay = (p) => ppid(p) === 0 && cmd(p).startsWith("/opt/mini-agent/run -- ");
  const unexpected = pids.filter((p) => !(p === 1 || (ppid(p) === 1 && cmd(p) === "/opt/mini-agent/spawner") || mine(p) || relay(p)));
  add("pid_namespace", "the PID namespace is private: only the sandbox's own processes are visible", "the init (pid 1), the spawner, this probe (and its children; under a plain docker exec, its relay); nothing else",
    { processes: list, unexpected }, pids.includes(1) && /init/.test(cmd(1)) && unexpected.length === 0, "that another container's processes are hidden from the host");
});

// Under gVisor the OCI seccomp filter covers only the container's init process tree, not
// `docker exec`'d processes: the measured process must descend from the spawner (the
// container's main process under the init), not from an exec.
const spawnedTree = safe(function spawnedTree() {
  const chain = [];
  let pid = process.pid;
  for (let hops = 0; hops < 64 && pid > 0; hops++) {
    const stat = read(`/proc/${pid}/stat`) ?? "";
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? 0);
    const argv0 = (read(`/proc/${pid}/cmdline`) ?? "").split("\0")[0];
    chain.push(`${pid}:${argv0}`);
    if (pid === 1) break;
    pid = ppid;
  }
  const argv0 = (entry) => entry.slice(entry.indexOf(":") + 1);
  const spawnerAt = chain.findIndex((e) => argv0(e) === "/opt/mini-agent/spawner");
  // this process -> spawner -> the init (pid 1): nothing else in between or above
  const passed = spawnerAt === 1 && chain.length === 3 && chain[2].startsWith("1:") && /init/.test(argv0(chain[2]));
  add("spawned_tree", "the measured process is a child of the spawner under the container's init (the seccomp-filtered tree), not a docker exec child",
    "probe -> /opt/mini-agent/spawner -> init (pid 1)", chain, passed,
    "that a process started some other way would be filtered (the executor starts every command this way)");
});

const runtime = safe(function runtime() {
  const version = read("/proc/version") ?? "";
  const gvisor = os.release() === "4.4.0" || /gVisor/i.test(version) || version.includes("Sun Jan 10 15:06:54 PST 2016");
  const detected = gvisor ? "runsc" : "runc";
  add("runtime", "the runtime seen from inside is the configured one", args.runtime, { detected, release: os.release(), version: version.trim().slice(0, 120) },
    detected === args.runtime, "the runtime's own hardening; a kernel version heuristic can be spoofed by nothing inside but is a heuristic");
});

const devices = safe(function devices() {
  const allowed = new Set(["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts/ptmx", "/dev/console"]);
  // gVisor's sentry emulates these itself (using them needs capabilities that are dropped)
  if (args.runtime === "runsc") ["/dev/fuse", "/dev/net/tun"].forEach((d) => allowed.add(d));
  const chars = [];
  const blocks = [];
  const scan = (dir) => {
    let names = [];
    try { names = fs.readdirSync(dir); } catch { return; }
    for (const n of names) {
      const p = path.join(dir, n);
      let st;
      try { st = fs.lstatSync(p); } catch { continue; }
      if (st.isCharacterDevice()) chars.push(p);
      else if (st.isBlockDevice()) blocks.push(p);
      else if (st.isDirectory()) scan(p);
    }
  };
  scan("/dev");
  const unusual = chars.filter((c) => !allowed.has(c));
  add("devices", "only the usual character devices in /dev, no block devices", "null zero full random urandom tty ptmx; no block devices",
    { chars: chars.sort(), blocks, unusual }, unusual.length === 0 && blocks.length === 0, "device cgroup rules for devices created later (mknod needs CAP_MKNOD, dropped)");
});

const setuid = safe(function setuid() {
  const found = [];
  walk("/", (p, st) => { if (st.isFile() && (st.mode & 0o6000) !== 0) found.push(p); });
  add("setuid_files", "no setuid or setgid files in the image", "none", found, found.length === 0, "files in volumes mounted nosuid later");
});

const seccompSyscalls = safe(function seccompSyscalls() {
  const observed = helper();
  const names = ["keyctl", "unshare", "mount", "bpf", "io_uring_setup", "userfaultfd", "clone3_newuser"];
  // gVisor implements some of these itself or not at all: ENOSYS is a refusal too
  const denied = (n) => observed[n] && observed[n].ret < 0 && ["EPERM", "ENOSYS"].includes(observed[n].error);
  add("seccomp_syscalls", "seccomp (or the runtime) refuses keyctl, unshare, mount, bpf, io_uring_setup, userfaultfd, and clone3 creating a user namespace", "EPERM for each (ENOSYS for clone3, and under gVisor)",
    observed, names.every(denied), "other syscalls not in this list");
});

identity();
capabilities();
nnp();
seccompMode();
readonlyRoot();
writableMounts();
controlReadonly();
procSys();
procProtect();
const networkOk = network();
dockerSocket();
environment();
canaryFile();
pidNamespace();
spawnedTree();
runtime();
devices();
setuid();
seccompSyscalls();
await outbound(networkOk === true);
process.stdout.write(JSON.stringify({ nonce: args.nonce, probes }) + "\n");

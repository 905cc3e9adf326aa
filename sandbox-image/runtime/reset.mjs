// Runs inside a warm sandbox after every exec: SIGKILLs every process except
// PID 1 (the init), the keepalive and itself, so detached grandchildren of a
// test run cannot outlive it; with --clear it also empties /workspace so the
// next sync can make it mirror the host exactly (deletions included).
// Prints one JSON line: {killed, remaining, cleared}.
import fs from "node:fs";
import path from "node:path";

const self = process.pid;
const clear = process.argv.includes("--clear");

function pids() {
  return fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number);
}
function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0], ppid: Number(rest[1]) };
  } catch {
    return null;
  }
}
function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}
// The keepalive is the oldest child of PID 1 running keepalive.mjs; a
// candidate could start a look-alike, but only the lowest such pid is spared
// and PIDs only grow until pid_max wraps.
function keepalivePid() {
  const c = pids().filter((p) => p > 1 && stat(p)?.ppid === 1 && cmdline(p).includes("/opt/mini-agent/keepalive.mjs"));
  return c.length ? Math.min(...c) : -1;
}

const spare = new Set([1, self, keepalivePid()]);
let killed = 0;
for (let round = 0; round < 50; round++) {
  const victims = pids().filter((p) => !spare.has(p) && stat(p) && stat(p).state !== "Z");
  if (victims.length === 0) break;
  for (const p of victims) {
    try {
      process.kill(p, "SIGKILL");
      killed++;
    } catch {}
  }
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}
const remaining = pids().filter((p) => !spare.has(p) && stat(p) && stat(p).state !== "Z").length;

let cleared = false;
if (clear) {
  for (const name of fs.readdirSync("/workspace")) {
    fs.rmSync(path.join("/workspace", name), { recursive: true, force: true });
  }
  cleared = fs.readdirSync("/workspace").length === 0;
}
process.stdout.write(JSON.stringify({ killed, remaining, cleared }) + "\n");
process.exitCode = remaining === 0 && (!clear || cleared) ? 0 : 1;

import { shellRun } from "../kit/shell.js";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiResponse, ErrorBody } from "../../daemon/src/contracts/api.js";
import { binArgs, cleanEnv, rawRequest, runClient, Started, type StartOptions } from "./harness.js";

/**
 * The daemon as a real process: lock, permissions, token, signals, and the
 * client's answers when nothing listens. Runs themselves are in run-flow.test.ts.
 */
const started = new Started();
const dir = (prefix: string) => started.dir(prefix);
const daemon = (opts: StartOptions) => started.daemon(opts);

afterEach(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

describe("mini-agent-daemon process", () => {
  it("creates a 0700 state dir and a 0600 socket, and answers health over it", async () => {
    const stateDir = path.join(dir("ma-e2e-"), "state");
    const d = await daemon({ stateDir });
    expect(fs.statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(d.socketPath).toBe(path.join(stateDir, "daemon.sock"));
    expect(fs.statSync(d.socketPath).mode & 0o777).toBe(0o600);
    const h = await runClient(["health", "--json", "--socket", d.socketPath]);
    const body = ApiResponse.parse(JSON.parse(h.stdout));
    expect(body.kind).toBe("health");
    expect(fs.readdirSync(path.join(stateDir, "logs"))).toContain("daemon.log");
    expect(fs.statSync(path.join(stateDir, "logs", "daemon.log")).mode & 0o777).toBe(0o600);
  });

  it("refuses a second daemon on the same state dir, naming the pid and socket that already run", async () => {
    const stateDir = dir("ma-e2e-");
    const first = await daemon({ stateDir });
    const second = await daemon({ stateDir, expectReady: false });
    expect(await second.exited).toBe(75);
    expect(second.stderr()).toContain(`pid ${first.proc.pid}`);
    expect(second.stderr()).toContain(first.socketPath);
    // the first one is untouched and still answers
    expect((await runClient(["list", "--socket", first.socketPath])).code).toBe(0);
  });

  it("takes over the lock and socket of a daemon that was SIGKILLed", async () => {
    const stateDir = dir("ma-e2e-");
    const first = await daemon({ stateDir });
    expect(await first.stop("SIGKILL")).toBe("SIGKILL");
    expect(fs.existsSync(path.join(stateDir, "daemon.lock"))).toBe(true);
    const second = await daemon({ stateDir });
    expect((await runClient(["list", "--socket", second.socketPath])).code).toBe(0);
  });

  it("stops on SIGTERM with exit 0 and removes its socket and lock", async () => {
    const stateDir = dir("ma-e2e-");
    const d = await daemon({ stateDir });
    expect(await d.stop("SIGTERM")).toBe(0);
    expect(fs.existsSync(d.socketPath)).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "daemon.lock"))).toBe(false);
  });

  it("regression: output to a closed pipe (`trace RUN | head`) ends quietly with status 141, where it died with an EPIPE stack trace", async () => {
    const proc = spawn(process.execPath, [...binArgs("client"), "--help"], { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    // the reader goes away before the client writes a byte
    proc.stdout.destroy();
    let stderr = "";
    proc.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => proc.on("exit", (c) => resolve(c)));
    expect({ code, stderr }).toEqual({ code: 141, stderr: "" });
  });

  it("fails loudly on an unknown flag (64) and refuses a non-loopback TCP address unless forced", async () => {
    const stateDir = dir("ma-e2e-");
    const bad = await daemon({ stateDir, args: ["--verbose"], expectReady: false });
    expect(await bad.exited).toBe(64);
    expect(bad.stderr()).toContain("unknown option --verbose");
    // one line, then the help command, which runs as printed from a shell without the bins on the PATH
    const help = /run `(.+)` for more/.exec(bad.stderr())?.[1];
    expect(help, bad.stderr()).toBeDefined();
    const shown = await shellRun(help!);
    expect(shown.code, shown.output).toBe(0);
    expect(shown.output).toContain("usage: mini-agent-daemon");
    const tokenFile = path.join(stateDir, "token");
    fs.writeFileSync(tokenFile, "a-token-long-enough-1234\n", { mode: 0o600 });
    const wide = await daemon({ stateDir, args: ["--tcp", "0.0.0.0:0", "--token-file", tokenFile], expectReady: false });
    expect(await wide.exited).toBe(64);
    expect(wide.stderr()).toContain("--force-non-loopback");
  });

  it("over loopback TCP: refuses a missing or wrong token with 401 and changes nothing", async () => {
    const stateDir = dir("ma-e2e-");
    const tokenFile = path.join(stateDir, "token");
    const token = "e2e-token-0123456789abcdef";
    fs.writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
    const d = await daemon({ stateDir, args: ["--tcp", "127.0.0.1:0", "--token-file", tokenFile] });
    expect(d.tcp?.host).toBe("127.0.0.1");
    const base = `http://127.0.0.1:${d.tcp!.port}`;
    const before = await rawRequest(d.socketPath, "GET", "/v1/runs");
    const attempts = [
      await fetch(`${base}/v1/runs`, {
        method: "POST",
        body: JSON.stringify({ workspace: "/tmp/x", fixture_dir: "/tmp/y" }),
        headers: { "content-type": "application/json" },
      }),
      await fetch(`${base}/v1/runs`, { headers: { authorization: `Bearer ${token}x` } }),
      await fetch(`${base}/v1/runs`, { headers: { authorization: `Basic ${token}` } }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(ErrorBody.parse(await res.json()).error.code).toBe("unauthorized");
    }
    const ok = await fetch(`${base}/v1/runs`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect((await rawRequest(d.socketPath, "GET", "/v1/runs")).text).toBe(before.text);
    // the token never reaches the log
    const log = fs.readFileSync(path.join(stateDir, "logs", "daemon.log"), "utf8");
    expect(log).not.toContain(token);
  });

  it("refuses a group-readable token file", async () => {
    const stateDir = dir("ma-e2e-");
    const tokenFile = path.join(stateDir, "token");
    fs.writeFileSync(tokenFile, "a-token-long-enough-1234\n");
    fs.chmodSync(tokenFile, 0o640);
    const d = await daemon({ stateDir, args: ["--tcp", "127.0.0.1:0", "--token-file", tokenFile], expectReady: false });
    expect(await d.exited).toBe(1);
    expect(d.stderr()).toContain("chmod 600");
  });
});

describe("mini-agent-client without a daemon", () => {
  it("says exactly how to start one and exits 2, never a raw ECONNREFUSED", async () => {
    const stateDir = dir("ma-e2e-");
    for (const args of [["health"], ["list"], ["status", "run-1"]]) {
      const r = await runClient([...args, "--state-dir", stateDir]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`mini-agent-daemon --state-dir ${stateDir}`);
      expect(r.stderr).toContain("npm run daemon");
      expect(r.stderr).not.toMatch(/ECONNREFUSED|ENOENT|at .*\.js:\d+/);
    }
    // a socket file left behind by a crashed daemon: still the same advice
    const first = await daemon({ stateDir });
    await first.stop("SIGKILL");
    const r = await runClient(["list", "--state-dir", stateDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("mini-agent-daemon --state-dir");
  });

  it("regression: an answer outside the API contract is reported as `internal: unexpected answer from the daemon` with the zod paths, where the bundled client died looking for dist/client/daemon/src/contracts/common.js", async () => {
    // no real daemon sends such an answer: a server on the socket that does is the only way to make one
    const socket = path.join(dir("ma-e2e-"), "odd.sock");
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "health", engine: "not an object" }));
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const r = await runClient(["health", "--json", "--socket", socket]);
      expect(r.stderr).toContain("unexpected answer from the daemon");
      expect(r.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at .*\.js:\d+/);
      expect(r.code).not.toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("exits 64 on usage errors before contacting anything", async () => {
    expect((await runClient(["run", "--workspace", "/tmp/x"])).code).toBe(64);
    expect((await runClient(["approve", "only-run"])).code).toBe(64);
    expect((await runClient(["reject", "r", "a"])).code).toBe(64);
    expect((await runClient(["frobnicate"])).code).toBe(64);
    expect((await runClient(["list", "--yes"])).code).toBe(64);
  });
});

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { allFiles } from "../e2e/harness.js";
import { driverArgs } from "../kit/driver.js";

/**
 * No request leaves a run the Agents SDK drives (issue 14): the run is made
 * in a real process whose environment invites every way out the SDK or its
 * OpenAI client could take: proxies at a closed local port, an OpenAI key
 * (a canary) and OPENAI_BASE_URL at a local server that counts what it gets.
 * The run completes, the server saw nothing, and the canary is nowhere in
 * the ledger, the trace files or the log. trusted_local with the fixture's
 * own replay: no engine is needed for this.
 */
const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "agents-sdk-driver.ts");
const CANARY = "sk-proj-CANARY0agents0sdk0must0never0send0this0key0anywhere00";
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("agents-sdk orchestrator makes no network request", () => {
  it("completes fixtures/linkcheck with proxies at a closed port and OPENAI_BASE_URL at a counting server: 0 requests, no canary in the ledger, traces or log", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "agents-sdk-offline-"));
    dirs.push(root);
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(500).end();
    });
    server.on("connection", () => seen.push("connection"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const proxy = `http://127.0.0.1:${await closedPort()}`;
    const stateDir = path.join(root, "state");
    const log = path.join(root, "daemon.log");
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        MINI_AGENT_DRIVER_BACKEND: "trusted_local",
        MINI_AGENT_DRIVER_LOG: log,
        HTTPS_PROXY: proxy,
        HTTP_PROXY: proxy,
        ALL_PROXY: proxy,
        https_proxy: proxy,
        http_proxy: proxy,
        all_proxy: proxy,
        OPENAI_API_KEY: CANARY,
        OPENAI_BASE_URL: base,
      };
      delete env.NO_PROXY;
      delete env.no_proxy;
      // the SDK turns tracing off by itself under NODE_ENV=test (vitest sets it): the run must not depend on that
      delete env.NODE_ENV;
      delete env.OPENAI_AGENTS_DISABLE_TRACING;
      const child = spawn(process.execPath, [...driverArgs(DRIVER), stateDir, "complete", path.join(root, "ws")], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
      expect({ code, err }).toEqual({ code: 0, err: "" });
      const view = JSON.parse(out.trim().split("\n").pop()!) as RunView;
      expect({ status: view.status, writes: view.counters.writes, orchestrator: view.orchestrator }).toEqual({
        status: "completed",
        writes: 2,
        orchestrator: "agents-sdk",
      });
      expect(seen).toEqual([]);
      for (const file of [...allFiles(stateDir), ...allFiles(path.join(root, "ws"))]) {
        expect({ file, canary: fs.readFileSync(file).includes(CANARY) }).toEqual({ file, canary: false });
      }
      // the SDK really ran it (paused twice, resumed its RunState twice)
      expect(
        fs
          .readFileSync(log, "utf8")
          .split("\n")
          .filter((l) => l.includes('"resumed":"saved_run_state"')),
      ).toHaveLength(2);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

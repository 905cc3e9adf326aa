/**
 * Test kit: the real API server on a real Unix socket in a temp dir, with
 * every dependency a test does not name filled by an inert default (no
 * drafts, a passing gate, empty isolation answers). A test names only what
 * its case is about, usually the run service.
 */
import fs from "node:fs";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { BUILTIN_DAEMON_POLICY } from "../policy/daemon-policy.js";
import { createPolicyView } from "../policy/policy-view.js";
import { closeServer, listenUnix } from "./listen.js";
import type { ApiDeps } from "./ports.js";
import { createApiServer } from "./server.js";

export interface TestApi {
  dir: string;
  socket: string;
  server: http.Server;
  /** closes every connection and the server, and removes the temp dir */
  stop(): Promise<void>;
}

export const INERT_API_DEPS: Omit<ApiDeps, "runService"> = {
  isolation: { runProbes: async () => ({}), latestReport: async () => null, health: () => Promise.reject(new Error("health is not part of this test")) },
  drafter: {
    draft: () => Promise.reject(new Error("no drafts in this test")),
    take: () => {
      throw new Error("no drafts in this test");
    },
  },
  liveGate: { check: async () => ({ ok: true }) },
  policy: createPolicyView(BUILTIN_DAEMON_POLICY),
  capture: { capture: () => Promise.reject(new Error("no capture in this test")) },
  version: "t",
  pid: 1,
  maxBodyBytes: 65536,
  maxWaitMs: 10,
};

export async function startTestApi(deps: Partial<ApiDeps> & Pick<ApiDeps, "runService">, prefix = "ma-api-"): Promise<TestApi> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const socket = path.join(dir, "d.sock");
  const server = createApiServer({ deps: { ...INERT_API_DEPS, ...deps }, log: pino({ level: "silent" }) });
  await listenUnix(server, socket);
  return {
    dir,
    socket,
    server,
    async stop() {
      server.closeAllConnections();
      await closeServer(server);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

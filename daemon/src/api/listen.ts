import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type http from "node:http";
import { MiniAgentError } from "../errors.js";

/**
 * Binds the API on a Unix socket with mode 0600. The umask is narrowed around
 * bind() so the socket is never visible with wider permissions, not even for
 * the moment between bind and chmod.
 */
/** sun_path holds 108 bytes including the terminating NUL on Linux */
const MAX_SOCKET_PATH_BYTES = 107;

export async function listenUnix(server: http.Server, socketPath: string): Promise<void> {
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new MiniAgentError(
      "invalid_request",
      `socket path is ${Buffer.byteLength(socketPath)} bytes; Unix sockets allow at most ${MAX_SOCKET_PATH_BYTES}. Use a shorter --socket PATH or --state-dir DIR`,
    );
  }
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  await removeStaleSocket(socketPath);
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  fs.chmodSync(socketPath, 0o600);
}

/**
 * A socket file left by a crashed daemon is removed; one that still answers
 * belongs to a live daemon (possibly of another state dir) and is never stolen.
 */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(socketPath);
  } catch {
    return;
  }
  if (!st.isSocket()) {
    throw new MiniAgentError("invalid_request", `${socketPath} exists and is not a socket; refusing to replace it`);
  }
  const alive = await new Promise<boolean>((resolve) => {
    const c = net.connect(socketPath);
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
  if (alive) {
    throw new MiniAgentError("daemon_already_running", `another daemon already answers on ${socketPath}`, { details: { socket: socketPath } });
  }
  fs.rmSync(socketPath, { force: true });
}

export async function listenTcp(server: http.Server, host: string, port: number): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  if (addr === null || typeof addr === "string") throw new MiniAgentError("internal", "TCP listener has no address");
  return { host: addr.address, port: addr.port };
}

/** Stops accepting; open keep-alive connections are closed once in-flight requests finish. */
export async function closeServer(server: http.Server): Promise<void> {
  if (!server.listening) return;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

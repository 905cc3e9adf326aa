import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type Docker from "dockerode";
import { pino } from "pino";
import { EgressProxy } from "../daemon/src/egress/index.js";
import { buildExecEnv, type SandboxConfig } from "../daemon/src/sandbox/config.js";
import { IN_IMAGE } from "../daemon/src/sandbox/host-config.js";
import { forwarderArgv, INSTALL_MOUNT_SHAPE, installMounts, writeInstallTools } from "../daemon/src/sandbox/install-sandbox.js";
import { IN_INSTALL, type InstallTool } from "../daemon/src/sandbox/install-tools.js";
import { RUN_LABEL, sandboxLabels } from "../daemon/src/sandbox/labels.js";
import { SandboxContainer } from "../daemon/src/sandbox/sandbox-container.js";
import { packExport, PUT_WORKSPACE_TIMEOUT_MS } from "../daemon/src/sandbox/workspace-tar.js";
import { listExport } from "../daemon/src/workspace/index.js";
import { type ExtraMount, inspectProbes } from "./host-probes.js";
import { EGRESS_CHECK_SOURCE, type EgressCheckOutput, type EgressCheckParams, UNLISTED_NAME } from "./egress-check.js";
import { type InsideRun, insideArgv, insideResults, p } from "./inside-run.js";
import type { ProbeResult } from "./types.js";

/** Every probe of the install sandbox carries this prefix: the same probe ids, another sandbox kind. */
export const INSTALL_PREFIX = "install_sandbox.";

/** What the host inspection expects beyond the workspace volume: the install mounts, from their one home. */
const INSTALL_EXTRA: readonly ExtraMount[] = INSTALL_MOUNT_SHAPE.map((m) => ({
  destination: m.Target,
  type: m.Type === "bind" ? "bind" : "volume",
  rw: m.ReadOnly !== true,
}));

export interface InstallProbeDeps {
  docker: Docker;
  config: SandboxConfig;
  digest: string;
  /** the host's npm and shell (install-sandbox.ts hostInstallTools) */
  tools: { npmRoot: string; shell: string };
}

/** A server on the host's 127.0.0.1 that answers the nonce: the one host the probe's allowlist holds. */
async function allowedServer(nonce: string): Promise<{ port: number; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "text/plain" }).end(nonce);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * The install sandbox (issue 25) proven in its own configuration: the same
 * HostConfig with the install mounts (installMounts, the install's own
 * builder), the egress proxy on the socket and the forwarder inside. The
 * in-container probe runs first, as the spawner's child (writable mounts and
 * sockets judged for this kind: node_modules is writable, the proxy's socket
 * is there); then, behind the forwarder, a check asks the proxy for the one
 * allowed host (a server of the host's on 127.0.0.1), for a name not on the
 * list (`.invalid`: it can resolve nowhere), and connects directly to
 * addresses. The proxy's dialler records every connection it makes, so a
 * refused name is shown never to have been dialled, and its log is read back.
 */
export async function installSandboxProbes(deps: InstallProbeDeps, inside: InsideRun): Promise<ProbeResult[]> {
  const prefixed = (rs: ProbeResult[]) => rs.map((r) => ({ ...r, id: `${INSTALL_PREFIX}${r.id}` }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-probe-install-"));
  fs.chmodSync(dir, 0o700);
  const server = await allowedServer(inside.nonce);
  const dialled: string[] = [];
  const logLines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l.trim()) logLines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  let proxy: EgressProxy | undefined;
  let box: SandboxContainer | undefined;
  try {
    const sock = path.join(dir, "sock");
    const tools = path.join(dir, "tools");
    fs.mkdirSync(sock, { mode: 0o755 });
    // the npm install's tools and mounts, as an install in this family has them (INSTALL_FAMILIES)
    const tool: InstallTool = { kind: "npm", registry: `http://127.0.0.1:${server.port}/` };
    const { plan } = writeInstallTools(tools, deps.tools, tool, "true");
    proxy = await EgressProxy.listen(path.join(sock, "proxy.sock"), {
      allow: [{ host: "127.0.0.1", port: server.port }],
      connect: (host, port) => {
        dialled.push(`${host}:${port}`);
        return net.connect({ host, port });
      },
      log: pino({ level: "info" }, sink),
    });
    const labels = sandboxLabels(`probe-${inside.nonce.slice(0, 12)}-install`, "probe", deps.config.instance);
    box = await SandboxContainer.startLabelled(
      deps.docker,
      deps.config,
      deps.digest,
      labels[RUN_LABEL]!,
      labels,
      false,
      undefined,
      [],
      installMounts(tool.kind, plan, { sock, tools, npmRoot: deps.tools.npmRoot }, labels),
    );
    const info = (await box.inspect()) as Parameters<typeof inspectProbes>[0];
    const vols = await Promise.all((info.Mounts ?? []).flatMap((m) => (m.Name ? [deps.docker.getVolume(m.Name).inspect()] : [])));
    const host = inspectProbes(info, deps.config, deps.digest, vols, INSTALL_EXTRA);
    const exported = await listExport(inside.ws, { forbidden: [], include: [] });
    await box.putWorkspace(packExport(exported.entries), PUT_WORKSPACE_TIMEOUT_MS);
    const b = box;
    const env = buildExecEnv(deps.config, { MINI_AGENT_NONCE: inside.nonce });
    const res = await box.run({
      argv: await insideArgv(deps.config, deps.docker, deps.digest, inside),
      env,
      timeoutMs: 120_000,
      capBytes: deps.config.outputCapBytes,
      onStop: () => b.kill(),
    });
    const insideOut = insideResults({ stdout: res.stdout, stderr: res.stderr, exit_code: res.exitCode }, inside.nonce).map(judgeForInstall);
    const params: EgressCheckParams = { hostPort: server.port, nonce: inside.nonce };
    const egress = await box.run({
      argv: forwarderArgv(plan, ["/usr/bin/node", "-e", EGRESS_CHECK_SOURCE, JSON.stringify(params)]),
      env,
      timeoutMs: 60_000,
      capBytes: deps.config.outputCapBytes,
      onStop: () => b.kill(),
    });
    return prefixed([...host, ...insideOut, ...egressProbes(egress, server, dialled, proxy, logLines)]);
  } finally {
    await box?.remove();
    await proxy?.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The install sandbox's own expectations for the two inside probes whose answer differs by design. */
function judgeForInstall(r: ProbeResult): ProbeResult {
  const o = r.observed as { user_writable?: string[]; rw_mounts?: string[]; present?: string[]; sockets?: string[] } | null;
  if (r.id === "writable_mounts") {
    const want = [IN_INSTALL.cache, "/tmp", IN_IMAGE.workspace, `${IN_IMAGE.workspace}/node_modules`].sort();
    // the binds must be mounted read-only by the kernel, not just unwritable for the user (the cache is a volume, writable by design)
    const binds = Object.values(IN_INSTALL).filter((t) => t !== IN_INSTALL.cache);
    const rwBinds = (o?.rw_mounts ?? []).filter((m) => binds.some((t) => m.startsWith(`${t}(`)));
    return {
      ...r,
      property:
        "the only mounts the sandbox user can write are /tmp, /workspace, its node_modules tmpfs and the download caches' tmpfs; the socket folder, tools and npm are mounted read-only",
      expected: { user_writable: want, read_write_binds: [] },
      passed: JSON.stringify(o?.user_writable ? [...o.user_writable].sort() : null) === JSON.stringify(want) && rwBinds.length === 0,
    };
  }
  if (r.id === "docker_socket") {
    const want = [`${IN_INSTALL.egress}/proxy.sock`];
    return {
      ...r,
      property: "no container-engine socket is reachable; the only socket file is the egress proxy's",
      expected: { present: [], sockets: want },
      passed: (o?.present ?? ["?"]).length === 0 && JSON.stringify(o?.sockets ?? null) === JSON.stringify(want),
    };
  }
  return r;
}

function egressProbes(
  res: { stdout: string; stderr: string; exitCode: number | null },
  server: { port: number; seen: string[] },
  dialled: string[],
  proxy: EgressProxy,
  logLines: Array<Record<string, unknown>>,
): ProbeResult[] {
  let out: EgressCheckOutput | null = null;
  try {
    out = JSON.parse(res.stdout.trim().split("\n").pop() ?? "") as EgressCheckOutput;
  } catch {
    out = null;
  }
  const ran = { exit_code: res.exitCode, stderr: res.stderr.slice(0, 500) };
  const allowedTarget = `127.0.0.1:${server.port}`;
  const refusedEvents = proxy.events.filter((e) => e.verdict === "refused").map((e) => `${e.method} ${e.host}:${e.port}`);
  const refusedLogged = logLines.filter((l) => l.msg === "egress refused" && l.host === UNLISTED_NAME).length;
  return [
    p(
      "egress_allowed",
      "through the proxy, the install sandbox reaches the one host on its allowlist",
      `GET http://${allowedTarget}/ answered 200 with the nonce; the host's server saw it`,
      { check: out?.allowed ?? ran, server_saw: server.seen },
      out?.allowed.status === 200 && out.allowed.body_is_nonce && server.seen.length === 1,
      "anything beyond this host and port (the refusals below)",
    ),
    p(
      "egress_refused",
      "a name not on the allowlist is refused by the proxy with 403, logged, and never dialled nor looked up",
      {
        connect: 403,
        get: 403,
        refusals: [`CONNECT ${UNLISTED_NAME}:443`, `GET ${UNLISTED_NAME}:80`],
        logged: 2,
        dialled: [allowedTarget],
      },
      { check: out?.refused ?? ran, refusals: refusedEvents, logged: refusedLogged, dialled },
      out?.refused.connect === 403 &&
        out.refused.get === 403 &&
        JSON.stringify(refusedEvents) === JSON.stringify([`CONNECT ${UNLISTED_NAME}:443`, `GET ${UNLISTED_NAME}:80`]) &&
        refusedLogged === 2 &&
        JSON.stringify(dialled) === JSON.stringify([allowedTarget]),
      "what a listed registry serves (the install's own lock files decide that)",
    ),
    p(
      "egress_direct",
      "a direct connection to any address, the host's included, fails in the kernel: the proxy is the only way out",
      "every connect fails (ENETUNREACH off the loopback; nothing of the host's on the sandbox's own 127.0.0.1)",
      out?.direct ?? ran,
      out !== null && Object.keys(out.direct).length >= 3 && Object.values(out.direct).every((v) => v !== "connected"),
      "other protocols than TCP (no interface or route exists for them either: network_interfaces)",
    ),
  ];
}

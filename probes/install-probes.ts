import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import type Docker from "dockerode";
import { pino } from "pino";
import { type AllowedHost, EgressProxy } from "../daemon/src/egress/index.js";
import { MiniAgentError } from "../daemon/src/errors.js";
import { buildExecEnv, type SandboxConfig } from "../daemon/src/sandbox/config.js";
import { IN_IMAGE } from "../daemon/src/sandbox/host-config.js";
import { forwarderArgv, installSandboxConfig, installMountShape, installMounts, writeInstallTools } from "../daemon/src/sandbox/install-sandbox.js";
import { IN_INSTALL, type InstallKind, type InstallTool } from "../daemon/src/sandbox/install-tools.js";
import { RUN_LABEL, sandboxLabels } from "../daemon/src/sandbox/labels.js";
import { SandboxContainer } from "../daemon/src/sandbox/sandbox-container.js";
import { packExport, PUT_WORKSPACE_TIMEOUT_MS } from "../daemon/src/sandbox/workspace-tar.js";
import { listExport } from "../daemon/src/workspace/index.js";
import { type ExtraMount, inspectProbes } from "./host-probes.js";
import { EGRESS_CHECK_FILE, type EgressCheckParams, egressCheckArgv, parseEgressCheck, UNLISTED_NAME } from "./egress-check.js";
import { judgeEgress } from "./egress-judge.js";
import { type InsideRun, insideArgv, insideResults } from "./inside-run.js";
import type { ProbeResult } from "./types.js";

/** Every probe of the install sandbox carries this prefix: the same probe ids, another sandbox kind. */
export const INSTALL_PREFIX = "install_sandbox.";

/** What the host inspection expects beyond the workspace volume: the kind's install mounts, from their one home. */
function installExtra(kind: InstallKind): ExtraMount[] {
  return installMountShape(kind).map((m) => ({ destination: m.Target!, type: m.Type === "bind" ? "bind" : "volume", rw: m.ReadOnly !== true }));
}

export interface InstallProbeDeps {
  docker: Docker;
  config: SandboxConfig;
  digest: string;
  /** which install sandbox: the config's family's (install-sandbox.ts installKindFor) */
  kind: InstallKind;
  /** the host's npm, shell and pip (install-sandbox.ts hostInstallTools); pip is needed for a pip install's sandbox */
  tools: { npmRoot: string; shell: string; pipRoot?: string | undefined };
  /** the proxy's allowlist; default: the host's one server. Another list is a broken configuration whose probes must fail. */
  allow?: readonly AllowedHost[];
}

/** A tool of the kind, pointed at the host's server: its plan gives the install's forwarder and result volume. */
function probeTool(kind: InstallKind, port: number): InstallTool {
  const url = `http://127.0.0.1:${port}/`;
  switch (kind) {
    case "npm":
      return { kind, registry: url };
    case "pip":
      return { kind, index: `${url}simple/`, extra: [] };
    case "go":
      return { kind, goproxy: url, gosumdb: "off", gonosumdb: "", goflags: "" };
  }
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
 * The install sandbox (issue 25) of one install kind (npm, pip or go: the
 * family's) proven in its own configuration: the same HostConfig with that
 * kind's install mounts (installMounts, the install's own builder), the egress
 * proxy on the socket and the kind's forwarder inside. The
 * in-container probe runs first, as the spawner's child (writable mounts and
 * sockets judged for this kind: node_modules is writable, the proxy's socket
 * is there); then, behind the forwarder, a check asks the proxy for the one
 * allowed host (a server of the host's on 127.0.0.1), for a name not on the
 * list (`.invalid`: it can resolve nowhere), and connects directly to
 * addresses; it runs under the image's own language (egress-check.ts). The proxy's dialler records every connection it makes, so a
 * refused name is shown never to have been dialled, and its log is read back.
 */
export async function installSandboxProbes(deps: InstallProbeDeps, inside: InsideRun): Promise<ProbeResult[]> {
  const prefixed = (rs: ProbeResult[]) => rs.map((r) => ({ ...r, id: `${INSTALL_PREFIX}${r.id}` }));
  if (deps.kind === "pip" && !deps.tools.pipRoot) throw new MiniAgentError("sandbox_error", "this host has no pip: a pip install's sandbox cannot be made");
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
    // the kind's tools and mounts, as an install in this family has them, and the kind's egress check beside them
    const tool = probeTool(deps.kind, server.port);
    const { plan } = writeInstallTools(tools, deps.tools, tool, "true");
    const check = EGRESS_CHECK_FILE[deps.kind];
    fs.writeFileSync(path.join(tools, check.file), check.source, { mode: 0o444 });
    proxy = await EgressProxy.listen(path.join(sock, "proxy.sock"), {
      allow: deps.allow ?? [{ host: "127.0.0.1", port: server.port }],
      connect: (host, port) => {
        dialled.push(`${host}:${port}`);
        return net.connect({ host, port });
      },
      log: pino({ level: "info" }, sink),
    });
    const labels = sandboxLabels(`probe-${inside.nonce.slice(0, 12)}-install`, "probe", deps.config.instance);
    // the install's own configuration (its memory limit), as runInstall starts it
    const config = installSandboxConfig(deps.config);
    box = await SandboxContainer.startLabelled(
      deps.docker,
      config,
      deps.digest,
      labels[RUN_LABEL]!,
      labels,
      false,
      undefined,
      [],
      installMounts(tool.kind, plan, { sock, tools, npmRoot: deps.tools.npmRoot, pipRoot: deps.tools.pipRoot }, labels),
    );
    const info = (await box.inspect()) as Parameters<typeof inspectProbes>[0];
    const vols = await Promise.all((info.Mounts ?? []).flatMap((m) => (m.Name ? [deps.docker.getVolume(m.Name).inspect()] : [])));
    const host = inspectProbes(info, config, deps.digest, vols, installExtra(deps.kind));
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
    const insideOut = insideResults({ stdout: res.stdout, stderr: res.stderr, exit_code: res.exitCode }, inside.nonce).map((r) =>
      judgeForInstall(deps.kind, r),
    );
    const params: EgressCheckParams = { hostPort: server.port, nonce: inside.nonce };
    const egress = await box.run({
      argv: forwarderArgv(plan, egressCheckArgv(deps.kind, params)),
      env,
      timeoutMs: 60_000,
      capBytes: deps.config.outputCapBytes,
      onStop: () => b.kill(),
    });
    const egressed = judgeEgress(parseEgressCheck(egress.stdout), egress, {
      allowedTarget: `127.0.0.1:${server.port}`,
      serverSeen: server.seen,
      dialled,
      events: proxy.events,
      refusedLogged: logLines.filter((l) => l.msg === "egress refused" && l.host === UNLISTED_NAME).length,
    });
    return prefixed([...host, ...insideOut, ...egressed]);
  } finally {
    await box?.remove();
    await proxy?.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The install sandbox's own expectations for the two inside probes whose answer differs by design, from the kind's mount shape. */
function judgeForInstall(kind: InstallKind, r: ProbeResult): ProbeResult {
  const o = r.observed as { user_writable?: string[]; rw_mounts?: string[]; present?: string[]; sockets?: string[] } | null;
  const shape = installMountShape(kind);
  if (r.id === "writable_mounts") {
    const volumes = shape.filter((m) => m.Type === "volume").map((m) => m.Target!);
    const want = ["/tmp", IN_IMAGE.workspace, ...volumes].sort();
    // the binds must be mounted read-only by the kernel, not just unwritable for the user (the volumes are writable by design)
    const binds = shape.filter((m) => m.Type === "bind").map((m) => m.Target!);
    const rwBinds = (o?.rw_mounts ?? []).filter((m) => binds.some((t) => m.startsWith(`${t}(`)));
    return {
      ...r,
      property: `the only mounts the sandbox user can write are /tmp, /workspace, the ${kind} install's result volume and the download caches' volume; ${binds.join(", ")} are mounted read-only`,
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

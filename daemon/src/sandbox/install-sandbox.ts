import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { pino, type Logger } from "pino";
import type { ExportSpec } from "../contracts/sandbox.js";
import { type AllowedHost, type EgressEvent, EgressProxy } from "../egress/index.js";
import { checkExportFits, LAYER_LIMITS, listExport } from "../workspace/index.js";
import type { SandboxConfig } from "./config.js";
import { IN_IMAGE, tmpfsVolumeOptions } from "./host-config.js";
import { engineError } from "./image-pin.js";
import { extractInstalled } from "./install-extract.js";
import { FORWARDER_SOURCE } from "./install-forward.js";
import { sandboxLabels } from "./labels.js";
import { SandboxContainer } from "./sandbox-container.js";
import { packExport, PUT_WORKSPACE_TIMEOUT_MS } from "./workspace-tar.js";

/**
 * The install sandbox (issue 25): the install command runs in a sandbox of
 * the family's pinned image with the same HostConfig as every other one
 * (NetworkMode none: only `lo`, read-only root, non-root, no capabilities,
 * the same limits), so the repository's install scripts never run on the
 * host. Its one way out is the daemon's egress proxy (egress/proxy.ts) on a
 * Unix socket bind-mounted into it; a forwarder inside (install-forward.ts,
 * run by the image's node) listens on 127.0.0.1:PROXY_PORT and relays each
 * connection to that socket, and the install is told to use it as its
 * HTTP(S) proxy. The image has no npm and no shell, so the host's npm
 * (JavaScript, run by the image's node) and a copy of the host's `sh` are
 * bind-mounted read-only into this sandbox alone: test sandboxes never get
 * them. node_modules is written to a tmpfs volume of the sandbox user's and
 * copied out as data when the command succeeds.
 */
export const PROXY_PORT = 3128;
/** where the socket's folder, the tools and the npm tree appear inside the install sandbox */
export const IN_INSTALL = { egress: "/opt/mini-agent-egress", tools: "/opt/mini-agent-install", npm: "/opt/mini-agent-install-npm" } as const;

export interface InstallRequest {
  workspace: string;
  spec: ExportSpec;
  /** a shell command line, e.g. `npm ci` */
  command: string;
  allow: readonly AllowedHost[];
  /** npm's registry for this install (npm_config_registry); its auth lines never enter the sandbox */
  registry: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface InstallOutcome {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  egress: EgressEvent[];
  /** a folder of the daemon's holding `node_modules/` (and the workspace's lock files), when the command succeeded; the caller removes it */
  resultRoot: string | null;
}

export interface InstallSandboxDeps {
  docker: Docker;
  config: SandboxConfig;
  digest: string;
  /** the host's npm package folder (…/lib/node_modules/npm) and shell, mounted read-only into the install sandbox alone */
  npmRoot: string;
  shell: string;
  /**
   * A PEM file of extra CA certificates the host's node trusts (its NODE_EXTRA_CA_CERTS), for a network
   * whose TLS is re-signed on the way (a company proxy): only its certificate blocks enter the sandbox.
   */
  caFile?: string;
  /** must not throw: each egress decision as it is made */
  onEgress?: (e: EgressEvent) => void;
  log?: Logger;
}

/**
 * The host's npm (beside the node running this process) and shell, or null when either is missing
 * (then no install sandbox can be made); `caFile`: the host node's NODE_EXTRA_CA_CERTS, if set.
 */
export function hostInstallTools(execPath: string, caFile: string | undefined): { npmRoot: string; shell: string; caFile?: string } | null {
  const npmRoot = path.join(path.dirname(execPath), "..", "lib", "node_modules", "npm");
  if (!fs.existsSync(path.join(npmRoot, "bin", "npm-cli.js")) || !fs.existsSync("/bin/sh")) return null;
  // the CA certificates this node trusts beyond its own (a network that re-signs TLS), for the install's npm
  return { npmRoot, shell: fs.realpathSync("/bin/sh"), ...(caFile && { caFile }) };
}

const LOCK_NAMES = ["package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"];

const CA_FILE_MAX_BYTES = 4 << 20;
const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----/g;

/**
 * The certificate blocks of a PEM file and nothing else (a bundle that also held a private key
 * gives only its certificates), or null when there are none or the file cannot be read.
 */
export function certificatesOf(file: string): string | null {
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > CA_FILE_MAX_BYTES) return null;
    const blocks = fs.readFileSync(file, "latin1").match(CERTIFICATE_BLOCK);
    return blocks && blocks.length > 0 ? `${blocks.join("\n")}\n` : null;
  } catch {
    return null;
  }
}

/**
 * The install sandbox's tools folder: a copy of the host's shell, npm/npx wrappers, the forwarder,
 * an empty npmrc and the CA certificates, if any (returned: their PEM text, or null).
 */
export function writeInstallTools(tools: string, deps: Pick<InstallSandboxDeps, "shell" | "caFile">): string | null {
  fs.mkdirSync(path.join(tools, "bin"), { recursive: true, mode: 0o755 });
  fs.copyFileSync(deps.shell, path.join(tools, "bin/sh"));
  fs.chmodSync(path.join(tools, "bin/sh"), 0o555);
  for (const [name, cli] of [
    ["npm", "npm-cli.js"],
    ["npx", "npx-cli.js"],
  ] as const) {
    fs.writeFileSync(path.join(tools, "bin", name), `#!${IN_INSTALL.tools}/bin/sh\nexec /usr/bin/node ${IN_INSTALL.npm}/bin/${cli} "$@"\n`, { mode: 0o555 });
  }
  fs.writeFileSync(path.join(tools, "forward.cjs"), FORWARDER_SOURCE, { mode: 0o444 });
  fs.writeFileSync(path.join(tools, "npmrc"), "", { mode: 0o444 });
  const ca = deps.caFile ? certificatesOf(deps.caFile) : null;
  if (ca) fs.writeFileSync(path.join(tools, "ca.pem"), ca, { mode: 0o444 });
  return ca;
}

/**
 * The install sandbox's mounts beyond the HostConfig every sandbox gets: a writable, size-capped
 * tmpfs for node_modules (the sandbox user's), and read-only binds of the egress socket's folder,
 * the tools and the host's npm. The one place they are written: the install, its probes
 * (probes/install-probes.ts) and the isolation report's configuration hash (INSTALL_MOUNT_SHAPE) use it.
 */
export function installMounts(dirs: { sock: string; tools: string; npmRoot: string }, labels: Record<string, string>): Docker.MountSettings[] {
  const bind = (source: string, target: string): Docker.MountSettings => ({ Type: "bind", Source: source, Target: target, ReadOnly: true });
  return [
    {
      Type: "volume",
      Source: "",
      Target: `${IN_IMAGE.workspace}/node_modules`,
      ReadOnly: false,
      VolumeOptions: {
        NoCopy: true,
        Labels: labels,
        DriverConfig: { Name: "local", Options: tmpfsVolumeOptions(LAYER_LIMITS.maxBytes, "sandbox") },
      },
    },
    bind(dirs.sock, IN_INSTALL.egress),
    bind(dirs.tools, IN_INSTALL.tools),
    bind(dirs.npmRoot, IN_INSTALL.npm),
  ];
}

/**
 * The install mounts as the isolation report's configuration hash covers them: every field but the
 * host folders' names (a fresh temporary folder per install) and the labels (a run's own).
 */
export const INSTALL_MOUNT_SHAPE: readonly Docker.MountSettings[] = installMounts(
  { sock: "<egress socket folder>", tools: "<install tools folder>", npmRoot: "<host npm>" },
  {},
);

/** The families whose image runs an install sandbox: its forwarder and npm run under the image's node. */
export const INSTALL_FAMILIES: readonly string[] = ["node"];

/**
 * Whether a sandbox of this config has an install sandbox: a family of INSTALL_FAMILIES, under runc.
 * Under gVisor (runsc) the bind-mounted egress socket is not there for the sandbox (runsc exposes no host
 * Unix socket unless registered with --host-uds; its probes show no socket file and every proxy connection
 * reset), so an install could reach nothing.
 */
export function hasInstallSandbox(config: Pick<SandboxConfig, "imageFamily" | "runtime">): boolean {
  return INSTALL_FAMILIES.includes(config.imageFamily) && config.runtime === INSTALL_RUNTIME;
}

/** The one runtime an install sandbox runs under (see hasInstallSandbox). */
export const INSTALL_RUNTIME = "runc";

/** argv that runs `command` behind the forwarder: 127.0.0.1:PROXY_PORT inside relays to the egress socket. */
export function forwarderArgv(command: readonly string[]): string[] {
  return ["/usr/bin/node", `${IN_INSTALL.tools}/forward.cjs`, String(PROXY_PORT), `${IN_INSTALL.egress}/proxy.sock`, ...command];
}

export async function runInstall(deps: InstallSandboxDeps, req: InstallRequest): Promise<InstallOutcome> {
  const log = deps.log ?? pino({ level: "silent" });
  // 0700: only the daemon's user reaches the socket from the host; the sandbox sees just its sock/ folder
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-install-"));
  fs.chmodSync(dir, 0o700);
  let box: SandboxContainer | undefined;
  let proxy: EgressProxy | undefined;
  // the folder goes with the sandbox unless it holds a result the caller takes (removeInstallDir)
  let handedOver = false;
  try {
    const sock = path.join(dir, "sock");
    const tools = path.join(dir, "tools");
    fs.mkdirSync(sock, { mode: 0o755 });
    const ca = writeInstallTools(tools, deps);
    proxy = await EgressProxy.listen(path.join(sock, "proxy.sock"), { allow: req.allow, ...(deps.onEgress && { onEvent: deps.onEgress }), log });

    const exported = await listExport(req.workspace, req.spec);
    checkExportFits(exported.entries, deps.config.workspaceBytes);
    const labels = sandboxLabels(`install-${path.basename(dir).slice(-6)}`, "install", deps.config.instance);
    const mounts = installMounts({ sock, tools, npmRoot: deps.npmRoot }, labels);
    box = await SandboxContainer.startLabelled(deps.docker, deps.config, deps.digest, labels["mini-agent.run"] ?? "install", labels, false, log, [], mounts);
    await box.putWorkspace(packExport(exported.entries), PUT_WORKSPACE_TIMEOUT_MS, req.signal);
    const proxyUrl = `http://127.0.0.1:${PROXY_PORT}`;
    const env = Object.entries({
      ...deps.config.baseEnv,
      PATH: `${IN_INSTALL.tools}/bin:/usr/bin`,
      HOME: "/tmp",
      npm_config_cache: "/tmp/npm-cache",
      npm_config_registry: req.registry,
      // no user or global npmrc: the host's (with its tokens) is never there, and nothing in /tmp is read as one
      npm_config_userconfig: `${IN_INSTALL.tools}/npmrc`,
      npm_config_globalconfig: "/dev/null",
      npm_config_proxy: proxyUrl,
      npm_config_https_proxy: proxyUrl,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
      ...(ca && { NODE_EXTRA_CA_CERTS: `${IN_INSTALL.tools}/ca.pem` }),
      HTTP_PROXY: proxyUrl,
      HTTPS_PROXY: proxyUrl,
      http_proxy: proxyUrl,
      https_proxy: proxyUrl,
    }).map(([k, v]) => `${k}=${v}`);
    const b = box;
    const outcome = await box.run({
      argv: forwarderArgv([`${IN_INSTALL.tools}/bin/sh`, "-c", req.command]),
      env,
      timeoutMs: req.timeoutMs,
      capBytes: deps.config.outputCapBytes,
      ...(req.signal && { signal: req.signal }),
      onStop: () => b.kill(),
    });
    let resultRoot: string | null = null;
    if (outcome.exitCode === 0 && !outcome.timedOut) {
      resultRoot = path.join(dir, "result");
      fs.mkdirSync(resultRoot, { mode: 0o700 });
      let tar: NodeJS.ReadableStream;
      try {
        tar = (await box.container.getArchive({ path: `${IN_IMAGE.workspace}/node_modules` })) as NodeJS.ReadableStream;
      } catch (err) {
        throw engineError(err);
      }
      await extractInstalled(tar, resultRoot, "node_modules", LAYER_LIMITS);
      for (const n of LOCK_NAMES) if (fs.existsSync(path.join(req.workspace, n))) fs.copyFileSync(path.join(req.workspace, n), path.join(resultRoot, n));
    }
    handedOver = resultRoot !== null;
    return {
      exitCode: outcome.exitCode,
      timedOut: outcome.timedOut,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      egress: [...proxy.events],
      resultRoot,
    };
  } finally {
    await box?.remove();
    await proxy?.close();
    if (!handedOver) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Removes what runInstall left (its result folder's parent). */
export function removeInstallDir(resultRoot: string): void {
  fs.rmSync(path.dirname(resultRoot), { recursive: true, force: true });
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { pino, type Logger } from "pino";
import type { ExportSpec } from "../contracts/sandbox.js";
import { type AllowedHost, type EgressEvent, EgressProxy } from "../egress/index.js";
import { MiniAgentError } from "../errors.js";
import { checkExportFits, LAYER_LIMITS, LOCK_FILES, listExport } from "../workspace/index.js";
import type { SandboxConfig } from "./config.js";
import { tmpfsVolumeOptions } from "./host-config.js";
import { engineError } from "./image-pin.js";
import { extractInstalled } from "./install-extract.js";
import { familyInstallKind, IN_INSTALL, type InstallKind, type InstallPlan, type InstallTool, installPlan } from "./install-tools.js";
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
 * HTTP(S) proxy. The images have no package manager and no shell, so the
 * host's npm (JavaScript, run by the image's node) or pip (Python, run by the
 * image's python) and a copy of the host's `sh` are bind-mounted read-only
 * into this sandbox alone: test sandboxes never get them, so nothing can be
 * installed at run time. The result folder (node_modules, .venv, Go's
 * vendor: install-tools.ts) is written to a tmpfs volume of the sandbox
 * user's and copied out as data when the command succeeds.
 */
export const PROXY_PORT = 3128;

/**
 * The install sandbox's memory limit. Its installed folder and its download cache are tmpfs, whose
 * pages count against the sandbox's memory, so the test sandbox's 512 MiB could not hold a real
 * install (eslint, typescript and vitest as devDependencies: npm was OOM-killed at exit 137). It holds
 * both at their size limit (LAYER_LIMITS) and 1 GiB for the package manager itself.
 */
export const INSTALL_MEMORY_BYTES = 2 * LAYER_LIMITS.maxBytes + 1024 * 1024 * 1024;

/** The configuration an install sandbox (and the probes of it) starts with: the family's, with the install's own memory limit. */
export function installSandboxConfig(config: SandboxConfig): SandboxConfig {
  return { ...config, memoryBytes: Math.max(config.memoryBytes, INSTALL_MEMORY_BYTES) };
}

export interface InstallRequest {
  workspace: string;
  spec: ExportSpec;
  /** a shell command line, e.g. `npm ci` */
  command: string;
  allow: readonly AllowedHost[];
  /** which package manager, and the registry it is pointed at */
  tool: InstallTool;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface InstallOutcome {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  egress: EgressEvent[];
  /** a folder of the daemon's holding the result folder (node_modules/, .venv/ or vendor/), when the command succeeded; the caller removes it */
  resultRoot: string | null;
  /** the kernel killed the install for the sandbox's memory limit */
  oomKilled: boolean;
  /** that limit (installSandboxConfig) */
  memoryBytes: number;
}

export interface InstallSandboxDeps {
  docker: Docker;
  config: SandboxConfig;
  digest: string;
  /** the host's npm package folder (…/lib/node_modules/npm) and shell, mounted read-only into the install sandbox alone */
  npmRoot: string;
  shell: string;
  /** the host's pip package folder (…/dist-packages/pip), mounted read-only into a pip install's sandbox alone; absent: no pip installs */
  pipRoot?: string;
  /** the host's CA bundle (its certificate blocks only enter the sandbox), for pip's and Go's https */
  caBundle?: string;
  /**
   * A PEM file of extra CA certificates the host's node trusts (its NODE_EXTRA_CA_CERTS), for a network
   * whose TLS is re-signed on the way (a company proxy): only its certificate blocks enter the sandbox.
   */
  caFile?: string;
  /** must not throw: each egress decision as it is made */
  onEgress?: (e: EgressEvent) => void;
  log?: Logger;
}

const LOCK_NAMES_OF = { ...LOCK_FILES, node_modules: ["package.json", ...LOCK_FILES.node_modules] } as const;

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

/** Where Debian's python3-pip and the host's CA bundle are (scripts/toolchains-ensure.sh installs the first). */
const HOST_PIP = "/usr/lib/python3/dist-packages/pip";
const HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** The host's tools an install sandbox mounts or copies: InstallSandboxDeps without the engine and the run's parts. */
export type HostInstallTools = Pick<InstallSandboxDeps, "npmRoot" | "shell" | "pipRoot" | "caBundle" | "caFile">;

/**
 * The host's npm (beside the node running this process) and shell, or null when either is missing
 * (then no install sandbox can be made); Debian's pip (pip installs alone) and the host's CA bundle
 * (pip's and Go's https) when present; `caFile`: the host node's NODE_EXTRA_CA_CERTS, if set.
 */
export function hostInstallTools(execPath: string, caFile: string | undefined): HostInstallTools | null {
  const npmRoot = path.join(path.dirname(execPath), "..", "lib", "node_modules", "npm");
  if (!fs.existsSync(path.join(npmRoot, "bin", "npm-cli.js")) || !fs.existsSync("/bin/sh")) return null;
  return {
    npmRoot,
    shell: fs.realpathSync("/bin/sh"),
    // the CA certificates this node trusts beyond its own (a network that re-signs TLS), for the install's tools
    ...(caFile && { caFile }),
    ...(fs.existsSync(path.join(HOST_PIP, "__main__.py")) && { pipRoot: HOST_PIP }),
    ...(fs.existsSync(HOST_CA_BUNDLE) && { caBundle: HOST_CA_BUNDLE }),
  };
}

/**
 * The install sandbox's tools folder for one install: a copy of the host's shell, the tool's wrappers
 * and forwarder, an empty npmrc and the CA certificates, if any. Returns the plan it was written for
 * and the extra CA certificates' PEM text (null: none).
 */
export function writeInstallTools(
  tools: string,
  deps: Pick<InstallSandboxDeps, "shell" | "caFile" | "caBundle">,
  tool: InstallTool,
  command: string,
): { plan: InstallPlan; ca: string | null } {
  fs.mkdirSync(path.join(tools, "bin"), { recursive: true, mode: 0o755 });
  fs.copyFileSync(deps.shell, path.join(tools, "bin/sh"));
  fs.chmodSync(path.join(tools, "bin/sh"), 0o555);
  fs.writeFileSync(path.join(tools, "npmrc"), "", { mode: 0o444 });
  const ca = deps.caFile ? certificatesOf(deps.caFile) : null;
  if (ca) fs.writeFileSync(path.join(tools, "ca.pem"), ca, { mode: 0o444 });
  // pip and Go read one bundle of every CA they trust (the images carry none): the host's, with its extra ones
  const bundle = [deps.caBundle ? certificatesOf(deps.caBundle) : null, ca].filter((c): c is string => c !== null).join("");
  if (bundle) fs.writeFileSync(path.join(tools, "ca-bundle.pem"), bundle, { mode: 0o444 });
  const plan = installPlan(tool, command, bundle ? `${IN_INSTALL.tools}/ca-bundle.pem` : null);
  fs.writeFileSync(path.join(tools, plan.forwarder.file), plan.forwarder.source, { mode: 0o444 });
  for (const [name, body] of plan.wrappers) fs.writeFileSync(path.join(tools, "bin", name), `#!${IN_INSTALL.tools}/bin/sh\n${body}\n`, { mode: 0o555 });
  return { plan, ca };
}

/**
 * The install sandbox's mounts beyond the HostConfig every sandbox gets: writable, size-capped
 * tmpfs volumes of the sandbox user's where the tool's result is made and where its download
 * caches go, and read-only binds of the
 * egress socket's folder, the tools and the host's npm (npm installs) or pip (pip installs). The one
 * place they are written: the install, its probes (probes/install-probes.ts) and the isolation
 * report's configuration hash (installMountShape) use it.
 */
export function installMounts(
  kind: InstallKind,
  plan: Pick<InstallPlan, "mountAt">,
  dirs: { sock: string; tools: string; npmRoot: string; pipRoot?: string | undefined },
  labels: Record<string, string>,
): Docker.MountSettings[] {
  const bind = (source: string, target: string): Docker.MountSettings => ({ Type: "bind", Source: source, Target: target, ReadOnly: true });
  return [
    {
      Type: "volume",
      Source: "",
      Target: plan.mountAt,
      ReadOnly: false,
      VolumeOptions: {
        NoCopy: true,
        Labels: labels,
        DriverConfig: { Name: "local", Options: tmpfsVolumeOptions(LAYER_LIMITS.maxBytes, "sandbox") },
      },
    },
    // the download caches: the tool's result is not there, so nothing of them enters the layer
    {
      Type: "volume",
      Source: "",
      Target: IN_INSTALL.cache,
      ReadOnly: false,
      VolumeOptions: {
        NoCopy: true,
        Labels: labels,
        DriverConfig: { Name: "local", Options: tmpfsVolumeOptions(LAYER_LIMITS.maxBytes, "sandbox") },
      },
    },
    bind(dirs.sock, IN_INSTALL.egress),
    bind(dirs.tools, IN_INSTALL.tools),
    ...(kind === "npm" ? [bind(dirs.npmRoot, IN_INSTALL.npm)] : []),
    ...(kind === "pip" && dirs.pipRoot ? [bind(dirs.pipRoot, `${IN_INSTALL.pip}/pip`)] : []),
  ];
}

/**
 * A kind's install mounts as the isolation report's configuration hash covers them (config-hash.ts)
 * and its probes expect them (probes/install-probes.ts): every field but the host folders' names (a
 * fresh temporary folder per install) and the labels. npm's shape is the one node reports were keyed
 * by before pip and Go were probed, unchanged, so those reports stay valid.
 */
export function installMountShape(kind: InstallKind): readonly Docker.MountSettings[] {
  return installMounts(
    kind,
    installPlan(SHAPE_TOOL[kind], "", null),
    { sock: "<egress socket folder>", tools: "<install tools folder>", npmRoot: "<host npm>", pipRoot: "<host pip>" },
    {},
  );
}

/** A tool of each kind, for its plan's mount point alone (installMountShape). */
const SHAPE_TOOL: { [K in InstallKind]: Extract<InstallTool, { kind: K }> } = {
  npm: { kind: "npm", registry: "" },
  pip: { kind: "pip", index: "", extra: [] },
  go: { kind: "go", goproxy: "", gosumdb: "", gonosumdb: "", goflags: "" },
};

/** The one runtime an install sandbox runs under (see installKindFor). */
export const INSTALL_RUNTIME = "runc";

/**
 * Which install sandbox a sandbox of this config has: its family's install kind (install-tools.ts
 * INSTALL_KIND_OF; a custom family's base's), under runc; null: none. Under gVisor (runsc) the
 * bind-mounted egress socket is not there for the sandbox (runsc exposes no host Unix socket unless
 * registered with --host-uds; its probes show no socket file and every proxy connection reset), so an
 * install could reach nothing.
 */
export function installKindFor(config: Pick<SandboxConfig, "imageFamily" | "familyBase" | "runtime">): InstallKind | null {
  return config.runtime === INSTALL_RUNTIME ? familyInstallKind(config) : null;
}

/** argv that runs `command` behind the plan's forwarder: 127.0.0.1:PROXY_PORT inside relays to the egress socket. */
export function forwarderArgv(plan: Pick<InstallPlan, "launch">, command: readonly string[]): string[] {
  return [...plan.launch(PROXY_PORT, `${IN_INSTALL.egress}/proxy.sock`), ...command];
}

export async function runInstall(deps: InstallSandboxDeps, req: InstallRequest): Promise<InstallOutcome> {
  const log = deps.log ?? pino({ level: "silent" });
  if (req.tool.kind === "pip" && !deps.pipRoot)
    throw new MiniAgentError(
      "sandbox_error",
      "this daemon has no pip to install with (Debian's python3-pip on this machine: bash scripts/toolchains-ensure.sh python3-pip)",
    );
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
    const { plan, ca } = writeInstallTools(tools, deps, req.tool, req.command);
    proxy = await EgressProxy.listen(path.join(sock, "proxy.sock"), { allow: req.allow, ...(deps.onEgress && { onEvent: deps.onEgress }), log });

    const exported = await listExport(req.workspace, req.spec);
    checkExportFits(exported.entries, deps.config.workspaceBytes);
    const labels = sandboxLabels(`install-${path.basename(dir).slice(-6)}`, "install", deps.config.instance);
    const mounts = installMounts(req.tool.kind, plan, { sock, tools, npmRoot: deps.npmRoot, pipRoot: deps.pipRoot }, labels);
    const config = installSandboxConfig(deps.config);
    box = await SandboxContainer.startLabelled(deps.docker, config, deps.digest, labels["mini-agent.run"] ?? "install", labels, false, log, [], mounts);
    await box.putWorkspace(packExport(exported.entries), PUT_WORKSPACE_TIMEOUT_MS, req.signal);
    const proxyUrl = `http://127.0.0.1:${PROXY_PORT}`;
    const env = Object.entries({
      ...deps.config.baseEnv,
      PATH: `${IN_INSTALL.tools}/bin:/usr/bin`,
      HOME: "/tmp",
      npm_config_proxy: proxyUrl,
      npm_config_https_proxy: proxyUrl,
      ...(ca && { NODE_EXTRA_CA_CERTS: `${IN_INSTALL.tools}/ca.pem` }),
      ...plan.env,
      HTTP_PROXY: proxyUrl,
      HTTPS_PROXY: proxyUrl,
      http_proxy: proxyUrl,
      https_proxy: proxyUrl,
    }).map(([k, v]) => `${k}=${v}`);
    const b = box;
    const outcome = await box.run({
      argv: forwarderArgv(plan, [`${IN_INSTALL.tools}/bin/sh`, "-c", plan.script]),
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
        tar = (await box.container.getArchive({ path: plan.resultPath })) as NodeJS.ReadableStream;
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404)
          throw new MiniAgentError("sandbox_error", `the install exited 0 but made no ${plan.folder}/: nothing to make a layer of`, {
            details: { folder: plan.folder },
          });
        throw engineError(err);
      }
      await extractInstalled(tar, resultRoot, plan.folder, LAYER_LIMITS);
      // the lock files beside the folder are part of its layer's key (dependency-export.ts)
      for (const n of LOCK_NAMES_OF[plan.folder])
        if (fs.existsSync(path.join(req.workspace, n))) fs.copyFileSync(path.join(req.workspace, n), path.join(resultRoot, n));
    }
    handedOver = resultRoot !== null;
    return {
      exitCode: outcome.exitCode,
      timedOut: outcome.timedOut,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      egress: [...proxy.events],
      resultRoot,
      oomKilled: outcome.oomKilled,
      memoryBytes: config.memoryBytes,
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

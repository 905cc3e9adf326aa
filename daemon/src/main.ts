import fs from "node:fs";
import type http from "node:http";
import os from "node:os";
import type { DestinationStream, Logger } from "pino";
import { draftTask, keptDrafter } from "./adhoc/index.js";
import { usageErrorText } from "./config/cli-args.js";
import { closeServer, listenTcp, listenUnix } from "./api/listen.js";
import type { IsolationService, LiveGate } from "./api/ports.js";
import { createApiServer } from "./api/server.js";
import type { CaptureService } from "./capture/index.js";
import type { EnvService } from "./runtime/env-layers.js";
import type { RetentionService } from "./api/ports.js";
import { DAEMON_DEFAULTS, DAEMON_USAGE, isLoopbackHost, parseDaemonArgs, type DaemonConfig } from "./config/daemon-config.js";
import { acquireInstanceLock, type InstanceLock } from "./config/instance-lock.js";
import { statePath } from "./config/state-dir.js";
import { createCredentialSource, takeCredentialEnv, type CredentialSource } from "./credentials/credential-source.js";
import { readTokenFile } from "./credentials/token-file.js";
import { isMiniAgentError } from "./errors.js";
import { createLogger, openLogFile } from "./log/logger.js";
import { loadDaemonPolicy, type DaemonPolicy } from "./policy/daemon-policy.js";
import { createPolicyView } from "./policy/policy-view.js";
import { resolveRunPolicy } from "./policy/run-policy.js";
import { createSecretSet, type SecretSet } from "./redact/index.js";
import { systemClock } from "./runtime/ports.js";
import type { RunService } from "./runtime/service.js";
import { readImageLockSync } from "./sandbox/image-lock.js";
import type { Executor } from "./sandbox/executor.js";
import type { ImageFamily } from "./contracts/test-report.js";
import { createChecksService } from "./checks/index.js";
import { createCheckApprovals } from "./checks/approvals.js";

/** Exit codes of mini-agent-daemon, set in this one place (documented in --help). */
// what a program that starts a daemon on a state dir (mini-agent-worker) checks before it starts one
export { knownFamiliesAt } from "./sandbox/families.js";

export const DAEMON_EXIT = { ok: 0, failure: 1, usage: 64, alreadyRunning: 75 } as const;

export interface DaemonServices {
  runService: RunService;
  isolation: IsolationService;
  liveGate: LiveGate;
  /** `eval capture`: reads the run's ledger rows and baseline (capture/) */
  capture: CaptureService;
  /** `env list|gc` (runtime/env-layers.ts); absent: no dependency layers */
  env?: EnvService;
  /** `gc` and the state dir's size in `health` (retention/gc.ts) */
  retention?: RetentionService;
  /** the container executor of an image family, for the workspace checks (checks/); absent: no engine, no checks */
  containerFor?(family: ImageFamily): Executor;
  /** removes containers/volumes this project left behind (by label); resolves with how many */
  reapLeftovers(): Promise<number>;
  /** releases engine connections etc. after shutdown; optional */
  close?(): Promise<void>;
}

export interface ServiceContext {
  config: DaemonConfig;
  log: Logger;
  credentials: CredentialSource;
  /** the daemon's environment with the credential variables already removed */
  env: NodeJS.ProcessEnv;
  /** credentials the daemon holds (TCP token, API key once read), for every sink to scrub */
  secrets: SecretSet;
  /** the policy file loaded at start-up (or the built-in policy); each run resolves its own from it */
  policy: DaemonPolicy;
}

/** Every side effect main() has, so a test can run the real daemon in-process. */
export interface MainDeps {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** mini-agent-daemon as the user can run it (config/program-command.ts), for `--help` in a usage error; default: the bin's name */
  program?: string;
  pid: number;
  version: string;
  out(line: string): void;
  err(line: string): void;
  createServices(ctx: ServiceContext): Promise<DaemonServices>;
  /** registers the shutdown trigger (SIGTERM/SIGINT for the real process); returns an unregister function */
  onShutdownSignal(handler: (signal: string) => void): () => void;
  /** log sink; default <state>/logs/daemon.log */
  logDestination?: DestinationStream;
  /** resolves once the daemon listens (tests use it instead of polling) */
  onReady?(info: ReadyInfo): void;
}

export interface ReadyInfo {
  socketPath: string;
  tcp: { host: string; port: number } | null;
  pid: number;
}

export async function main(argv: string[], deps: MainDeps): Promise<number> {
  const parsed = parseDaemonArgs(argv, deps.env, deps.cwd);
  if (parsed.kind === "help") {
    deps.out(DAEMON_USAGE);
    return DAEMON_EXIT.ok;
  }
  if (parsed.kind === "usage_error") {
    deps.err(usageErrorText("mini-agent-daemon", parsed.message, `${deps.program ?? "mini-agent-daemon"} --help`).trimEnd());
    return DAEMON_EXIT.usage;
  }
  const config = parsed.config;
  if (config.tcp && !isLoopbackHost(config.tcp.host) && !config.forceNonLoopback) {
    deps.err(
      `mini-agent-daemon: refusing to listen on ${config.tcp.host}: it is not a loopback address and the API controls your workspaces. ` +
        `Use 127.0.0.1, or add --force-non-loopback if you really mean it.`,
    );
    return DAEMON_EXIT.usage;
  }

  // before anything is created or locked: a broken policy file stops the start-up, naming its line
  let policy: DaemonPolicy;
  try {
    policy = loadDaemonPolicy(config.policy.file, { named: config.policy.named });
  } catch (err) {
    deps.err(`mini-agent-daemon: ${isMiniAgentError(err) ? err.message : `cannot load the policy ${config.policy.file}`}`);
    return DAEMON_EXIT.failure;
  }

  let lock: InstanceLock | null = null;
  try {
    prepareStateDir(config.stateDir);
    lock = await acquireInstanceLock(statePath(config.stateDir, "lock"), config.socketPath, deps.pid);
  } catch (err) {
    if (isMiniAgentError(err, "daemon_already_running")) {
      deps.err(`mini-agent-daemon: ${err.message}. Stop it first, or use another --state-dir.`);
      return DAEMON_EXIT.alreadyRunning;
    }
    deps.err(`mini-agent-daemon: cannot prepare the state dir ${config.stateDir}: ${(err as Error).message}`);
    return DAEMON_EXIT.failure;
  }

  const token = { value: null as string | null };
  // the credentials this daemon holds, as they become known: every sink scrubs them (redact/)
  const secrets = createSecretSet();
  const log = createLogger({
    level: config.logLevel,
    destination: deps.logDestination ?? openLogFile(statePath(config.stateDir, "logs")),
    knownSecrets: () => secrets.values(),
  });
  const servers: http.Server[] = [];
  let socketBound = false;
  let services: DaemonServices | null = null;
  // Listen for SIGTERM from here on: a stop requested during start-up (recovery,
  // reaping) is honoured once start-up is done, instead of killing the process mid-way.
  let offSignal: () => void = () => {};
  const stopRequested = new Promise<string>((resolve) => {
    offSignal = deps.onShutdownSignal((s) => {
      offSignal();
      resolve(s);
    });
  });
  try {
    if (config.tcp && config.tokenFile) token.value = readTokenFile(config.tokenFile, DAEMON_DEFAULTS.minTokenLength);
    secrets.add(token.value);
    const credentials = createCredentialSource({
      env: takeCredentialEnv(deps.env),
      filePath: statePath(config.stateDir, "credentials"),
      onRead: (key) => secrets.add(key),
    });
    services = await deps.createServices({ config, log, credentials, env: deps.env, secrets, policy });
    await startUp(services, log);

    // ad-hoc tasks: the folders that are never a workspace (the git state is read as data, no git runs)
    const draftDeps = {
      stateDir: config.stateDir,
      homeDirs: [deps.env.HOME ?? "", os.userInfo().homedir],
      // read per draft: a custom family built while the daemon runs is known at once
      imageLock: () => {
        try {
          return readImageLockSync(statePath(config.stateDir, "imageLock"));
        } catch {
          return null; // the executor's preflight reports a bad lock with its own error
        }
      },
    };
    const apiDeps = {
      runService: services.runService,
      // a drafted task is kept for the run that follows, which runs exactly what was shown (adhoc/kept-drafts.ts)
      drafter: keptDrafter(draftDeps, { now: () => systemClock.now(), log: log.child({ component: "drafter" }) }),
      isolation: services.isolation,
      liveGate: services.liveGate,
      policy: createPolicyView(policy),
      capture: services.capture,
      ...(services.env && { env: services.env }),
      ...(services.retention && { retention: services.retention }),
      ...(services.containerFor && {
        checks: createChecksService({
          draft: (input) => draftTask(input, draftDeps),
          gate: (family) => services!.liveGate.check({ backend: "container", family }),
          executorFor: services.containerFor,
          policyFor: (workspace) => resolveRunPolicy(policy, undefined, workspace).policy,
          stateDir: config.stateDir,
          knownSecrets: () => secrets.values(),
          approvals: createCheckApprovals(),
        }),
      }),
      version: deps.version,
      pid: deps.pid,
      maxBodyBytes: config.maxBodyBytes,
      maxWaitMs: config.maxWaitMs,
    };
    const unixServer = createApiServer({ deps: apiDeps, log: log.child({ listener: "unix" }) });
    servers.push(unixServer);
    await listenUnix(unixServer, config.socketPath);
    socketBound = true;
    let tcp: ReadyInfo["tcp"] = null;
    if (config.tcp && token.value) {
      const tcpServer = createApiServer({ deps: apiDeps, log: log.child({ listener: "tcp" }), token: token.value });
      servers.push(tcpServer);
      tcp = await listenTcp(tcpServer, config.tcp.host, config.tcp.port);
    }
    log.info(
      { socket: config.socketPath, tcp, stateDir: config.stateDir, runtime: config.runtime, policy: policy.source ?? "built-in", policyDigest: policy.digest },
      "daemon listening",
    );
    deps.out(`mini-agent-daemon ready pid=${deps.pid} socket=${config.socketPath}${tcp ? ` tcp=${tcp.host}:${tcp.port}` : ""}`);
    deps.onReady?.({ socketPath: config.socketPath, tcp, pid: deps.pid });

    const signal = await stopRequested;
    log.info({ signal }, "shutting down");
    await shutdown(servers, services, config, log);
    log.info("daemon stopped");
    return DAEMON_EXIT.ok;
  } catch (err) {
    log.error({ err }, "daemon failed");
    deps.err(`mini-agent-daemon: ${isMiniAgentError(err) ? err.message : "start-up failed; see the log in " + statePath(config.stateDir, "logs")}`);
    await Promise.allSettled(servers.map(closeServer));
    if (services) await services.runService.shutdown().catch(() => undefined);
    return isMiniAgentError(err, "daemon_already_running") ? DAEMON_EXIT.alreadyRunning : DAEMON_EXIT.failure;
  } finally {
    offSignal();
    if (socketBound) removeSocket(config.socketPath);
    lock?.release();
    log.flush?.();
  }
}

/** The state dir holds the ledger, logs and maybe a key: owner only. */
function prepareStateDir(stateDir: string): void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(stateDir, 0o700);
}

/**
 * Before the first request: remove what a previous daemon left in the engine,
 * then mark runs that were in flight as interrupted (resumable, not silently
 * continued). An unreachable engine is not fatal: health reports it.
 */
async function startUp(services: DaemonServices, log: Logger): Promise<void> {
  try {
    const reaped = await services.reapLeftovers();
    log.info({ reaped }, "reaped leftover sandboxes");
  } catch (err) {
    log.warn({ err }, "could not reap leftover sandboxes (engine unreachable?)");
  }
  await services.runService.recoverAtStartup();
}

/** SIGTERM: stop accepting, let the control plane cancel sandboxes and persist, then close. */
async function shutdown(servers: http.Server[], services: DaemonServices, config: DaemonConfig, log: Logger): Promise<void> {
  const closing = servers.map(closeServer);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log.warn({ timeoutMs: config.shutdownTimeoutMs }, "run service did not shut down in time");
      resolve();
    }, config.shutdownTimeoutMs);
  });
  try {
    await Promise.race([services.runService.shutdown(), timeout]);
  } catch (err) {
    log.error({ err }, "run service shutdown failed");
  } finally {
    clearTimeout(timer);
  }
  // Long-polls still waiting would hold close() open; the runs are persisted now.
  for (const s of servers) s.closeAllConnections();
  await Promise.allSettled(closing);
  await services.close?.().catch((err: unknown) => log.warn({ err }, "closing services failed"));
}

/** only called when we bound it: a socket we never bound may be another daemon's */
function removeSocket(socketPath: string): void {
  try {
    if (fs.lstatSync(socketPath).isSocket()) fs.rmSync(socketPath, { force: true });
  } catch {
    /* already gone */
  }
}

import fs from "node:fs";
import path from "node:path";
import type { EnvBuildBody } from "../contracts/api-responses.js";
import type { ExportSpec } from "../contracts/sandbox.js";
import { type AllowedHost, type EgressEvent, formatHost, hostOfUrl, npmRegistry, parseAllowHost } from "../egress/index.js";
import { MiniAgentError } from "../errors.js";
import type { InstallResult } from "../sandbox/docker-executor.js";
import type { InstallRequest } from "../sandbox/install-sandbox.js";

/** What `env build` needs of a family's executor (sandbox/docker-executor.ts DockerExecutor.install). */
export interface InstallerPort {
  install(req: InstallRequest, onEgress?: (e: EgressEvent) => void): Promise<InstallResult>;
}

export interface EnvBuildRequest {
  workspace: string;
  install: string;
  allowHosts: readonly string[];
  imageFamily?: string;
  timeoutMs: number;
}

/**
 * `mini-agent-client env build`: the install command runs in an install
 * sandbox (sandbox/install-sandbox.ts) and its node_modules becomes the
 * workspace's dependency layer. The allowlist is the registry the
 * workspace's or the user's .npmrc names (read as data; npm's default when
 * none does) plus each --allow-host; every refusal is logged by the proxy and
 * returned here so the user sees it. Only the node family installs so far
 * (npm); an npmrc's auth entries never enter the sandbox and authenticated
 * registries are not supported yet: requests reach them without credentials.
 */
export function createEnvBuild(deps: { installerFor: (family: string) => InstallerPort; home: string | null }) {
  return async (req: EnvBuildRequest): Promise<EnvBuildBody> => {
    const family = req.imageFamily ?? "node";
    if (family !== "node")
      throw new MiniAgentError("invalid_request", `env build installs with npm in the node family only, so far (got --image-family ${family})`, {
        details: { image_family: family },
      });
    // every refusal of bad input before anything is made
    const extra: AllowedHost[] = req.allowHosts.map(parseAllowHost);
    let st: fs.Stats;
    try {
      st = fs.statSync(req.workspace);
    } catch {
      throw new MiniAgentError("invalid_workspace", `workspace ${req.workspace} does not exist`, { details: { workspace: req.workspace } });
    }
    if (!st.isDirectory() || !fs.existsSync(path.join(req.workspace, "package.json")))
      throw new MiniAgentError("invalid_workspace", `workspace ${req.workspace} has no package.json at its root: nothing for npm to install`, {
        details: { workspace: req.workspace },
      });
    if (fs.existsSync(path.join(req.workspace, "node_modules")))
      throw new MiniAgentError(
        "invalid_workspace",
        `workspace ${req.workspace} already has a node_modules/: a run uses it as its layer; remove it to install in the sandbox instead`,
        { details: { workspace: req.workspace } },
      );
    const registry = npmRegistry(req.workspace, deps.home);
    const own = hostOfUrl(registry.url);
    if (own === null)
      throw new MiniAgentError("invalid_request", `the npm registry ${JSON.stringify(registry.url)} (from ${registry.from}) is not an http(s) URL`, {
        details: { registry: registry.url, from: registry.from },
      });
    const allow = [own, ...extra];
    const spec: ExportSpec = { forbidden: [], include: [] };
    const out = await deps.installerFor(family).install({
      workspace: req.workspace,
      spec,
      command: req.install,
      allow,
      registry: registry.url,
      timeoutMs: req.timeoutMs,
    });
    return {
      kind: "env_build",
      command: req.install,
      registry: registry.url,
      registry_from: registry.from,
      auth_dropped: registry.authDropped,
      allowed_hosts: allow.map(formatHost),
      exit_code: out.exitCode,
      timed_out: out.timedOut,
      output: (out.stdout + out.stderr).slice(-64 * 1024),
      egress: out.egress.map((e) => ({
        verdict: e.verdict,
        host: e.host,
        port: e.port,
        method: e.method,
        ...(e.reason !== undefined && { reason: e.reason }),
      })),
      layer: out.layer && { key: out.layer.key, folder: out.layer.folder, volume: out.layer.volume, size_bytes: out.layer.size_bytes, files: out.layer.files },
    };
  };
}

import fs from "node:fs";
import path from "node:path";
import type { EnvBuildBody } from "../contracts/api-responses.js";
import type { ExportSpec } from "../contracts/sandbox.js";
import {
  type AllowedHost,
  type EgressEvent,
  formatHost,
  type GoEnv,
  goProxyConfig,
  hostOfUrl,
  npmRegistry,
  parseAllowHost,
  type PipEnv,
  PYPI_FILES,
  pipIndex,
} from "../egress/index.js";
import { MiniAgentError } from "../errors.js";
import type { InstallResult } from "../sandbox/docker-executor.js";
import type { InstallRequest } from "../sandbox/install-sandbox.js";
import { INSTALL_FOLDER, INSTALL_KIND_OF, type InstallKind, type InstallTool } from "../sandbox/install-tools.js";
import { INSTALL_INPUTS } from "../workspace/index.js";

/** What `env build` needs of a family's executor (sandbox/docker-executor.ts DockerExecutor.install). */
export interface InstallerPort {
  /** the family's one install tool (install-tools.ts familyInstallKind; a custom family's base's), null: none */
  readonly installKind: InstallKind | null;
  install(req: InstallRequest, onEgress?: (e: EgressEvent) => void): Promise<InstallResult>;
}

export interface EnvBuildRequest {
  workspace: string;
  install: string;
  allowHosts: readonly string[];
  imageFamily?: string;
  timeoutMs: number;
}

type Tool = InstallTool["kind"];
/** the family an install of each tool runs in when none is named: INSTALL_KIND_OF read the other way */
const FAMILY_OF = Object.fromEntries(Object.entries(INSTALL_KIND_OF).map(([family, kind]) => [kind, family])) as Record<Tool, string>;
const PROGRAMS: Record<string, Tool> = { npm: "npm", npx: "npm", node: "npm", pip: "pip", pip3: "pip", python: "pip", python3: "pip", go: "go" };

/**
 * The package manager an install command runs (its first word), else the named family's own (`familyKind`),
 * else the one the workspace's files say, else npm.
 */
export function toolOf(command: string, workspace: string, familyKind: Tool | null = null): Tool {
  const first = /^\s*(\S+)/.exec(command)?.[1] ?? "";
  const byProgram = PROGRAMS[path.basename(first).replace(/^(python3)\.\d+$/, "$1")];
  if (byProgram) return byProgram;
  if (familyKind) return familyKind;
  const has = (n: string) => fs.existsSync(path.join(workspace, n));
  if (has("go.mod")) return "go";
  if (has("package.json")) return "npm";
  if (INSTALL_INPUTS[".venv"].needs.some(has)) return "pip";
  return "npm";
}

function refusedWorkspace(why: string, workspace: string): MiniAgentError {
  return new MiniAgentError("invalid_workspace", `workspace ${workspace} ${why}`, { details: { workspace } });
}

function urlHost(url: string, what: string, from: string): AllowedHost {
  const h = hostOfUrl(url);
  if (h === null)
    throw new MiniAgentError("invalid_request", `the ${what} ${JSON.stringify(url)} (from ${from}) is not an http(s) URL`, { details: { url, from } });
  return h;
}

interface ToolChoice {
  tool: InstallTool;
  url: string;
  from: string;
  authDropped: boolean;
  hosts: AllowedHost[];
  notes: string[];
}

/** The registry each tool is pointed at, read from the user's configuration as data, and the hosts it must reach. */
function configure(kind: Tool, workspace: string, home: string | null, env: EnvBuildConfigEnv): ToolChoice {
  if (kind === "npm") {
    const r = npmRegistry(workspace, home);
    return {
      tool: { kind, registry: r.url },
      url: r.url,
      from: r.from,
      authDropped: r.authDropped,
      hosts: [urlHost(r.url, "npm registry", r.from)],
      notes: [],
    };
  }
  if (kind === "pip") {
    const p = pipIndex(workspace, home, env);
    const hosts = [p.url, ...p.extra].map((u) => urlHost(u, "pip index", p.from));
    // PyPI's simple pages link to its files on another host
    if (p.from === "default") hosts.push(urlHost(PYPI_FILES, "pip index", "default"));
    return { tool: { kind, index: p.url, extra: p.extra }, url: p.url, from: p.from, authDropped: p.authDropped, hosts, notes: [] };
  }
  const g = goProxyConfig(home, env);
  return {
    tool: { kind, goproxy: g.goproxy, gosumdb: g.gosumdb, gonosumdb: g.gonosumdb, goflags: g.goflags },
    url: g.goproxy,
    from: g.from,
    authDropped: g.authDropped,
    hosts: g.hosts,
    notes: g.notes,
  };
}

/** What of the daemon's environment says where pip and Go download from (read in the entry point, passed as data). */
export type EnvBuildConfigEnv = PipEnv & GoEnv;

/**
 * `mini-agent-client env build`: the install command runs in an install
 * sandbox (sandbox/install-sandbox.ts) and its result becomes the
 * workspace's dependency layer: node_modules (npm, node family), .venv (pip,
 * python family) or vendor/ (Go, go family). The package manager is the
 * command's first word (else the workspace's files say). The allowlist is
 * the registry the user's configuration names, read as data (npm: .npmrc;
 * pip: requirements files, PIP_INDEX_URL, pip.conf; Go: GOPROXY and GOSUMDB
 * from the environment or Go's env file; each tool's default when none does)
 * plus each --allow-host; every refusal is logged by the proxy and returned
 * here so the user sees it. Credentials in that configuration never enter the
 * sandbox: authenticated registries are not supported yet.
 */
export function createEnvBuild(deps: { installerFor: (family: string) => InstallerPort; home: string | null; env?: EnvBuildConfigEnv }) {
  return async (req: EnvBuildRequest): Promise<EnvBuildBody> => {
    // every refusal of bad input before anything is made
    const extra: AllowedHost[] = req.allowHosts.map(parseAllowHost);
    let st: fs.Stats;
    try {
      st = fs.statSync(req.workspace);
    } catch {
      throw new MiniAgentError("invalid_workspace", `workspace ${req.workspace} does not exist`, { details: { workspace: req.workspace } });
    }
    if (!st.isDirectory()) throw refusedWorkspace("is not a folder", req.workspace);
    const named = req.imageFamily === undefined ? null : deps.installerFor(req.imageFamily);
    const kind = toolOf(req.install, req.workspace, named?.installKind ?? null);
    const family = req.imageFamily ?? FAMILY_OF[kind];
    // each family's image runs its own tool alone (pip needs python, npm node): another would fail inside
    // a sandbox made for nothing, with an exec error for its message
    // (a family with no known tool is left to the executor, whose preflight names the families it has)
    if (named?.installKind && named.installKind !== kind)
      throw new MiniAgentError(
        "invalid_request",
        `the ${family} family installs with ${named.installKind} alone, not ${kind}: run \`${req.install}\` with --image-family ${FAMILY_OF[kind]}, or install with ${named.installKind}`,
        { details: { image_family: family, family_tool: named.installKind, tool: kind } },
      );
    const folder = INSTALL_FOLDER[kind];
    const needs = INSTALL_INPUTS[folder].needs;
    if (!needs.some((n) => fs.existsSync(path.join(req.workspace, n))))
      throw refusedWorkspace(
        kind === "npm"
          ? "has no package.json at its root: nothing for npm to install"
          : `has none of ${needs.join(", ")} at its root: nothing says what ${kind} installs`,
        req.workspace,
      );
    for (const present of (folder === ".venv" ? [".venv", "venv"] : [folder]).filter((f) => fs.existsSync(path.join(req.workspace, f))))
      throw refusedWorkspace(`already has a ${present}/: a run uses it as its layer; remove it to install in the sandbox instead`, req.workspace);
    const choice = configure(kind, req.workspace, deps.home, deps.env ?? {});
    const seen = new Set<string>();
    const allow = [...choice.hosts, ...extra].filter((h) => !seen.has(formatHost(h)) && seen.add(formatHost(h)));
    const spec: ExportSpec = { forbidden: [], include: [] };
    const out = await (named ?? deps.installerFor(family)).install({
      workspace: req.workspace,
      spec,
      command: req.install,
      allow,
      tool: choice.tool,
      timeoutMs: req.timeoutMs,
    });
    return {
      kind: "env_build",
      command: req.install,
      tool: kind,
      registry: choice.url,
      registry_from: choice.from,
      auth_dropped: choice.authDropped,
      ...(choice.notes.length > 0 && { notes: choice.notes }),
      allowed_hosts: allow.map(formatHost),
      exit_code: out.exitCode,
      timed_out: out.timedOut,
      oom_killed: out.oomKilled,
      memory_limit_bytes: out.memoryBytes,
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

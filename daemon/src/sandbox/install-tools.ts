import type { BuiltinFamily } from "../contracts/sandbox.js";
import { IN_IMAGE } from "./host-config.js";
import { FORWARDER_GO_SOURCE, FORWARDER_PY_SOURCE, FORWARDER_SOURCE } from "./install-forward.js";

/**
 * What differs between an npm, a pip and a Go install in the install
 * sandbox (install-sandbox.ts): which folder becomes the layer, where the
 * writable volume that receives it is mounted, the environment that points
 * the tool at its registry through the egress proxy, and the script around
 * the user's command. Everything else (the sandbox, the proxy, the copy out
 * as data) is the same for all three.
 */
export type InstallTool =
  /** npm's registry (npm_config_registry); its auth lines never enter the sandbox */
  | { kind: "npm"; registry: string }
  /** pip's index and extra indexes, without credentials */
  | { kind: "pip"; index: string; extra: readonly string[] }
  /** Go's module proxy list (no `direct`), checksum database and the user's GONOSUMDB/GOFLAGS */
  | { kind: "go"; goproxy: string; gosumdb: string; gonosumdb: string; goflags: string };

export type InstallKind = InstallTool["kind"];

/**
 * The one install tool each built-in family has: its image runs that tool's
 * language (the python image has no node, the go image neither node nor
 * python), so an install of another kind cannot run there. A custom family
 * has its base's (familyInstallKind). Everything that asks which install a
 * family has derives from this list: env build's refusal, the isolation
 * hash's install mounts and which install sandbox the probes prove.
 */
export const INSTALL_KIND_OF = { node: "npm", python: "pip", go: "go" } as const satisfies Record<BuiltinFamily, InstallKind>;

/**
 * The install kind of a sandbox config's family whatever its runtime: its own (a built-in family)
 * or its base's (a custom family built FROM one, as its lock entry records: families.ts), else null.
 */
export function familyInstallKind(config: { imageFamily: string; familyBase: BuiltinFamily | null }): InstallKind | null {
  const family = config.familyBase ?? config.imageFamily;
  return Object.hasOwn(INSTALL_KIND_OF, family) ? INSTALL_KIND_OF[family as BuiltinFamily] : null;
}

/** where the socket's folder, the tools and the host's package managers appear inside the install sandbox */
export const IN_INSTALL = {
  egress: "/opt/mini-agent-egress",
  tools: "/opt/mini-agent-install",
  npm: "/opt/mini-agent-install-npm",
  /** holds `pip/`: on PYTHONPATH for the install only */
  pip: "/opt/mini-agent-install-pip",
  /** Go's result: `go mod vendor` removes its target first, which a mount point cannot be, so vendor/ is made inside this one */
  out: "/opt/mini-agent-install-out",
  /**
   * the tools' download caches (npm's, pip's, Go's module and build caches): a writable tmpfs of its own, as
   * large as a layer may be, where /tmp (64 MiB) ended an install whose tarballs passed that with ENOSPC
   */
  cache: "/opt/mini-agent-install-cache",
} as const;

/** The dependency folder each tool's install produces: the layer later runs mount at /workspace/FOLDER. */
export const INSTALL_FOLDER = { npm: "node_modules", pip: ".venv", go: "vendor" } as const satisfies Record<InstallKind, string>;

export interface InstallPlan {
  folder: (typeof INSTALL_FOLDER)[InstallKind];
  /** the sandbox user's writable tmpfs volume */
  mountAt: string;
  /** the folder copied out when the command succeeds (its last name is `folder`) */
  resultPath: string;
  env: Record<string, string>;
  /** the shell script run: the user's command, with what the tool needs before and after it */
  script: string;
  /** small wrapper programs written into the tools' bin/ (name, body after the #! line) */
  wrappers: Array<[string, string]>;
  /** the forwarder (install-forward.ts) in the language the family's image runs: its file name in the tools folder, and its text */
  forwarder: { file: string; source: string };
  /** how the forwarder is started inside the sandbox; the command to run follows these arguments */
  launch(port: number, socket: string): string[];
}

const SH = `${IN_INSTALL.tools}/bin/sh`;

/**
 * How a single Go file of ours is built inside the go family's install sandbox (the forwarder here, the
 * probes' egress check): GOPATH mode, so the workspace's go.mod plays no part and nothing is looked up.
 */
export const GO_BUILD_ENV = "GO111MODULE=off GOFLAGS= GOPROXY=off";

const VENV = `${IN_IMAGE.workspace}/.venv`;

/**
 * The plan for one tool. `caBundle` is the sandbox path of the CA certificates
 * the host trusts (null: none found), for pip's and Go's https.
 */
export function installPlan(tool: InstallTool, command: string, caBundle: string | null): InstallPlan {
  switch (tool.kind) {
    case "npm":
      return {
        folder: "node_modules",
        mountAt: `${IN_IMAGE.workspace}/node_modules`,
        resultPath: `${IN_IMAGE.workspace}/node_modules`,
        env: {
          npm_config_cache: `${IN_INSTALL.cache}/npm`,
          npm_config_registry: tool.registry,
          // no user or global npmrc: the host's (with its tokens) is never there, and nothing in /tmp is read as one
          npm_config_userconfig: `${IN_INSTALL.tools}/npmrc`,
          npm_config_globalconfig: "/dev/null",
          npm_config_update_notifier: "false",
          npm_config_fund: "false",
          npm_config_audit: "false",
        },
        script: command,
        wrappers: [
          ["npm", `exec /usr/bin/node ${IN_INSTALL.npm}/bin/npm-cli.js "$@"`],
          ["npx", `exec /usr/bin/node ${IN_INSTALL.npm}/bin/npx-cli.js "$@"`],
        ],
        forwarder: { file: "forward.cjs", source: FORWARDER_SOURCE },
        launch: (port, socket) => ["/usr/bin/node", `${IN_INSTALL.tools}/forward.cjs`, String(port), socket],
      };
    case "pip": {
      const trusted = [tool.index, ...tool.extra].flatMap((u) => (u.startsWith("http://") ? [new URL(u).host] : []));
      return {
        folder: ".venv",
        mountAt: VENV,
        resultPath: VENV,
        env: {
          // the venv's python first: `pip`, `python -m pip` and `pip install -r` all install into /workspace/.venv
          PATH: `${VENV}/bin:${IN_INSTALL.tools}/bin:/usr/bin`,
          VIRTUAL_ENV: VENV,
          PYTHONPATH: IN_INSTALL.pip,
          PIP_INDEX_URL: tool.index,
          ...(tool.extra.length > 0 && { PIP_EXTRA_INDEX_URL: tool.extra.join(" ") }),
          // an http index is what the user named: pip would otherwise ignore it for not being https
          ...(trusted.length > 0 && { PIP_TRUSTED_HOST: trusted.join(" ") }),
          // pip reads no configuration file in the sandbox (os.devnull is its own "none" value)
          PIP_CONFIG_FILE: "/dev/null",
          PIP_CACHE_DIR: `${IN_INSTALL.cache}/pip`,
          PIP_DISABLE_PIP_VERSION_CHECK: "1",
          PIP_NO_INPUT: "1",
          // no .pyc files: they carry a time stamp, so the same install would make a layer of another key each time
          PIP_NO_COMPILE: "1",
          ...(caBundle && { PIP_CERT: caBundle }),
        },
        // the image's own python makes the venv, so its pyvenv.cfg names the image's minor version
        script: `/usr/bin/python3 -m venv --without-pip ${VENV} || exit $?\n${command}`,
        wrappers: [
          ["pip", `exec ${VENV}/bin/python -m pip "$@"`],
          ["pip3", `exec ${VENV}/bin/python -m pip "$@"`],
        ],
        // the python image has no node
        forwarder: { file: "forward.py", source: FORWARDER_PY_SOURCE },
        launch: (port, socket) => ["/usr/bin/python3", "-I", `${IN_INSTALL.tools}/forward.py`, String(port), socket],
      };
    }
    case "go":
      return {
        folder: "vendor",
        mountAt: IN_INSTALL.out,
        resultPath: `${IN_INSTALL.out}/vendor`,
        env: {
          GOPROXY: tool.goproxy,
          GOSUMDB: tool.gosumdb,
          GOMODCACHE: `${IN_INSTALL.cache}/go-mod`,
          GOCACHE: `${IN_INSTALL.cache}/go-build`,
          ...(tool.gonosumdb && { GONOSUMDB: tool.gonosumdb }),
          // the image's own flag (no git in it) and the user's
          GOFLAGS: ["-buildvcs=false", tool.goflags].filter(Boolean).join(" "),
          ...(caBundle && { SSL_CERT_FILE: caBundle }),
        },
        // whatever the command fetched into the module cache becomes vendor/, offline: `go mod download` and
        // `go mod vendor` end the same way, and later runs build from vendor/ with no network (Go uses vendor/
        // by itself when it is there and consistent with go.mod)
        script: `${command}\nst=$?\n[ "$st" -eq 0 ] || exit "$st"\nGOPROXY=off go mod vendor -o ${IN_INSTALL.out}/vendor`,
        wrappers: [],
        // the go image has neither node nor python: the forwarder is built there first (GOPATH mode: the
        // workspace's go.mod plays no part; /tmp is exec in this family)
        forwarder: { file: "forward.go", source: FORWARDER_GO_SOURCE },
        launch: (port, socket) => [
          SH,
          "-c",
          `${GO_BUILD_ENV} go build -o /tmp/mini-agent-forward ${IN_INSTALL.tools}/forward.go || exit 127\nexec /tmp/mini-agent-forward "$@"`,
          "forward",
          String(port),
          socket,
        ],
      };
  }
}

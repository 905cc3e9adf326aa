import path from "node:path";
import { fileURLToPath } from "node:url";
import { type BuiltinFamily, IMAGE_FAMILIES } from "../daemon/src/contracts/sandbox.js";
import { buildGoCacheSeed } from "./go-seed.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");

/**
 * One image family per built-in family (daemon/src/contracts/sandbox.ts). A family is its
 * interpreter or toolchain binaries, the trees they need, and its env; the
 * builder copies the binaries with exactly the shared libraries `ldd` lists, so
 * nothing else is needed to add one. What a family needs from the sandbox at run
 * time (a larger or exec /tmp) is in daemon/src/sandbox/families.ts.
 */
export interface ImageDefinition {
  family: string;
  /** local tag; the executor never runs by tag, only by the digest recorded at build time. */
  tag: string;
  /** host executables copied to the same path, with their `ldd` closure. */
  binaries: string[];
  /**
   * shared libraries by soname (as `ldconfig -p` finds them on the host), copied with their `ldd`
   * closure: what the family's native add-ons load though its interpreter does not.
   */
  libraries?: string[];
  /** extra host files or directories copied verbatim: [hostPath, imagePath]. */
  trees: Array<[string, string]>;
  /** files baked under /opt/mini-agent: [repoRelativeSource, imagePath, mode]. */
  assets: Array<[string, string, number]>;
  /** static C helpers compiled into the image: [repoRelativeSource, imagePath]. */
  staticHelpers: Array<[string, string]>;
  env: Record<string, string>;
  /** the image's CMD (there is no shell in the image). */
  cmd: string[];
  /** host paths (or subtrees) inside `trees` that are left out, e.g. pip's installer or the toolchain's own test suite. */
  exclude?: string[];
  /** directories copied by `trees` whose shared objects (`*.so`) also get their `ldd` closure (Python's extension modules). */
  libraryClosureOf?: string[];
  /**
   * Exact edits to a copied file (a backported upstream fix): the build fails when `from` is not
   * in the file exactly once, so a different host version is never silently left unpatched.
   */
  patches?: Array<{ file: string; from: string; to: string }>;
  /** symbolic links made in the image: [imagePath, target]. */
  symlinks?: Array<[string, string]>;
  /**
   * What the spawner copies into each command's fresh /tmp (the image's `TMP_SEED_DIR`):
   * `name` is the entry made under it, `build` writes it at build time from the host files
   * the image carries, under the image's env.
   */
  tmpSeed?: { name: string; build(outDir: string, imageEnv: Record<string, string>): Promise<void> };
  /**
   * Debian packages the host files come from. The build checks them (and installs them as root on
   * Debian) with scripts/toolchains-ensure.sh first; a family without any never runs it.
   */
  hostPackages?: string[];
}

/**
 * What every sandbox family carries, whatever its language: the main process and its request
 * tool `run` (see sandbox-image/README.md), and the isolation probe with its syscall helper.
 * All static, so the probe run needs nothing from the family (issue 11): one probe, every image.
 */
const SANDBOX_HELPERS: Array<[string, string]> = [
  ["sandbox-image/helper/spawner.c", "/opt/mini-agent/spawner"],
  ["sandbox-image/helper/run.c", "/opt/mini-agent/run"],
  ["probes/inside/probe.c", "/opt/mini-agent/probe"],
  ["sandbox-image/helper/syscalls.c", "/opt/mini-agent/syscall-probe"],
];

/** Where an image keeps its /tmp seed; the spawner (helper/tmp-seed.h) copies what is in it into /tmp before each command. */
export const TMP_SEED_DIR = "/opt/mini-agent/tmp-seed";

const BASE_ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8" };

/** glibc's and gcc's runtime libraries, from Debian's libc6, libgcc-s1 and libstdc++6. */
const NATIVE_ADDON_LIBRARIES = ["librt.so.1", "libdl.so.2", "libpthread.so.0", "libm.so.6", "libgcc_s.so.1", "libstdc++.so.6"];

/** Debian's Go 1.19 (package golang-go); GOROOT is where its `go` binary lives. */
const GOROOT = "/usr/lib/go-1.19";

export const IMAGE_DEFINITIONS = {
  node: {
    family: "node",
    tag: "mini-agent/sandbox-node:local",
    // coreutils' env (libc only): every node_modules/.bin shim starts `#!/usr/bin/env node`, so
    // `npx jest` or `node_modules/.bin/vitest` ran into "no such file" without it. Not a shell.
    binaries: ["/usr/bin/node", "/usr/bin/env"],
    // What native test tooling loads beyond node's own closure: rolldown's binding (vitest 4, vite)
    // and lightningcss need librt, the rest is what Rust/C++ add-ons (swc, esbuild's npm
    // binaries) link. Without librt vitest dies at start-up ("Cannot find native binding").
    libraries: NATIVE_ADDON_LIBRARIES,
    hostPackages: ["libc6", "libgcc-s1", "libstdc++6"],
    trees: [],
    assets: [],
    staticHelpers: SANDBOX_HELPERS,
    env: BASE_ENV,
    // every command is a child of the spawner, in the init process tree the runtime's seccomp filter covers
    cmd: ["/opt/mini-agent/spawner"],
  },
  /**
   * Debian's python3.11 with exactly its stdlib and the shared libraries it and its extension
   * modules load, plus pytest and its pure-Python dependencies from Debian's python3-pytest.
   * No pip: neither pip nor ensurepip is copied, so nothing can be installed at run time.
   */
  python: {
    family: "python",
    tag: "mini-agent/sandbox-python:local",
    binaries: ["/usr/bin/python3.11"],
    trees: [
      ["/usr/lib/python3.11", "/usr/lib/python3.11"],
      // pytest 7.2 and what it imports (python3-pytest's Depends that 3.11 still needs)
      ...["_pytest", "pytest", "py.py", "pluggy", "iniconfig", "packaging", "attr", "attrs"].map((n): [string, string] => [
        `/usr/lib/python3/dist-packages/${n}`,
        `/usr/lib/python3/dist-packages/${n}`,
      ]),
    ],
    // pytest 7.2 asserts a config file exists when a `paths` ini value is read, so `-o pythonpath=src`
    // in a project without [tool.pytest.ini_options] died with AssertionError; pytest 7.3 and later
    // resolve such values from the invocation directory, as this backport does.
    patches: [
      {
        file: "/usr/lib/python3/dist-packages/_pytest/config/__init__.py",
        from: "            # TODO: This assert is probably not valid in all cases.\n            assert self.inipath is not None\n            dp = self.inipath.parent\n",
        to: "            dp = self.inipath.parent if self.inipath is not None else self.invocation_params.dir\n",
      },
    ],
    exclude: ["/usr/lib/python3.11/ensurepip", "/usr/lib/python3.11/site-packages", "/usr/lib/python3.11/test", "/usr/lib/python3.11/idlelib"],
    libraryClosureOf: ["/usr/lib/python3.11/lib-dynload"],
    symlinks: [
      ["/usr/bin/python3", "python3.11"],
      ["/usr/bin/python", "python3.11"],
    ],
    assets: [],
    staticHelpers: SANDBOX_HELPERS,
    env: {
      ...BASE_ENV,
      // the root is read-only and /workspace is the candidate's: no bytecode written anywhere,
      // and where something would write a cache it goes to /tmp
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONPYCACHEPREFIX: "/tmp/pycache",
      PYTHONNOUSERSITE: "1",
      PYTEST_ADDOPTS: "-o cache_dir=/tmp/pytest-cache",
    },
    cmd: ["/opt/mini-agent/spawner"],
    hostPackages: ["python3-pytest"],
  },
  /**
   * Debian's Go toolchain (its compiler, linker and vet under GOROOT/pkg/tool, the standard
   * library's source and its precompiled archives). Nothing is ever fetched: GOPROXY=off, and
   * no -mod flag, so Go's default applies (vendor/ when the module has one, else read-only
   * go.mod): a dependency that is not vendored fails with "module lookup disabled by
   * GOPROXY=off" (or "missing go.sum entry"). CGO_ENABLED=0: there is no C compiler.
   */
  go: {
    family: "go",
    tag: "mini-agent/sandbox-go:local",
    binaries: [],
    trees: [[GOROOT, GOROOT]],
    // the toolchain's own tests and docs, and precompiled archives of the go command itself
    exclude: [`${GOROOT}/test`, `${GOROOT}/api`, `${GOROOT}/misc`, `${GOROOT}/pkg/linux_amd64/cmd`],
    // the go command and its tools are dynamically linked on some builds: copy whatever they load
    libraryClosureOf: [`${GOROOT}/bin`, `${GOROOT}/pkg/tool`],
    symlinks: [
      ["/usr/bin/go", `${GOROOT}/bin/go`],
      ["/usr/bin/gofmt", `${GOROOT}/bin/gofmt`],
    ],
    assets: [],
    staticHelpers: SANDBOX_HELPERS,
    env: {
      ...BASE_ENV,
      GOROOT,
      // caches and temporary builds on the /tmp tmpfs (exec and larger for this family: daemon/src/sandbox/families.ts)
      GOCACHE: "/tmp/go-cache",
      GOPATH: "/tmp/go",
      GOMODCACHE: "/tmp/go/pkg/mod",
      GOTMPDIR: "/tmp",
      GOPROXY: "off",
      GOSUMDB: "off",
      GOTOOLCHAIN: "local",
      GOTELEMETRY: "off",
      // no git in the image: do not stamp version-control info into binaries
      GOFLAGS: "-buildvcs=false",
      CGO_ENABLED: "0",
    },
    // /tmp/go-cache starts as a build cache of the standard library (go-seed.ts), never empty
    tmpSeed: { name: "go-cache", build: buildGoCacheSeed },
    cmd: ["/opt/mini-agent/spawner"],
    hostPackages: ["golang-go"],
  },
  /** The bare Node runtime, no sandbox helpers: a base to package the daemon on (its Dockerfile sets the entrypoint). */
  "node-base": {
    family: "node-base",
    tag: "mini-agent/node-base:local",
    binaries: ["/usr/bin/node"],
    trees: [],
    assets: [],
    staticHelpers: [],
    env: BASE_ENV,
    cmd: ["/usr/bin/node"],
  },
} satisfies Record<string, ImageDefinition>;

export type ImageFamily = keyof typeof IMAGE_DEFINITIONS;

/**
 * the families candidate code runs in: the one list in contracts/sandbox.ts (node-base packages the
 * daemon itself: no sandbox, no probes). The type below fails to compile when one lacks a recipe.
 */
export const SANDBOX_FAMILIES: readonly BuiltinFamily[] = IMAGE_FAMILIES;
const EVERY_FAMILY_HAS_A_RECIPE: Record<BuiltinFamily, ImageDefinition> = IMAGE_DEFINITIONS;
void EVERY_FAMILY_HAS_A_RECIPE;

export function repoPath(rel: string): string {
  return path.join(REPO, rel);
}

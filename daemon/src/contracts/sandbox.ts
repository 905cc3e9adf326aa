import * as z from "zod/mini";

// zod/mini, like contracts/run.ts: the run view the client parses names the backend.

export const Runtime = z.enum(["runc", "runsc"]);

/**
 * The built-in sandbox image families: the ONE list every program derives from (the image
 * recipes in sandbox-image/definitions.ts, the client's and the probes' help, the fleet's queues,
 * the test script). Adding one to mini-agent touches this list and its recipe, nothing else.
 * A plain list so the client checks names without classic zod.
 */
export const IMAGE_FAMILIES = ["node", "python", "go"] as const;
export type BuiltinFamily = (typeof IMAGE_FAMILIES)[number];

/**
 * What a family's name may be: a built-in one, or a custom family a user built FROM one of them
 * (`npm run image:build -- --family NAME --dockerfile PATH`), known from the state dir's image lock.
 * Lowercase, so it fits an image tag and a queue or label value.
 */
export const FAMILY_NAME_PATTERN = /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/;

export function isBuiltinFamily(name: string): name is BuiltinFamily {
  return (IMAGE_FAMILIES as readonly string[]).includes(name);
}

/** "node|python|go" for usage lines, from the one list. */
export const FAMILY_CHOICES = IMAGE_FAMILIES.join("|");
export type Runtime = z.infer<typeof Runtime>;

export const Backend = z.enum(["container", "trusted_local"]);
export type Backend = z.infer<typeof Backend>;

/**
 * One opt-in of `--sandbox-include`: a file's path relative to the workspace
 * root (a new run's may not hold a wildcard: sandboxIncludeRefusal). It can only
 * lift the forbidden-glob rule for the file it names exactly
 * (workspace/sandbox-export.ts); links, special files and `.git` stay out.
 */
export const SandboxIncludeGlob = z.string().check(
  z.minLength(1),
  z.maxLength(256),
  z.refine((g) => !/[\u0000-\u001f\u007f]/.test(g), "must not contain NUL or control characters"),
  z.refine((g) => !g.includes("\\"), "must use '/' separators; backslashes are refused"),
  z.refine((g) => !g.startsWith("/") && !g.startsWith("~") && !/^[A-Za-z]:/.test(g), "must be relative to the workspace root"),
  z.refine((g) => !g.split("/").includes(".."), "must not contain '..'"),
  z.refine((g) => !g.split("/").some((seg) => seg === "" || seg === "."), "must not contain empty or '.' segments (write .env.test, not ./.env.test)"),
);
/** A run's opt-in list: bounded, so a request cannot make every sync test thousands of globs. */
export const SandboxInclude = z.array(SandboxIncludeGlob).check(z.maxLength(32));

/** picomatch's wildcards: `*`, `?`, `[...]`, `{a,b}` and the extglobs `!(..)`, `+(..)`, `@(..)`. */
const WILDCARD = /[*?[\]{}]|[!+@]\(/;

/**
 * Why a NEW run's opt-in is refused, or null. Every opt-in lifts the forbidden
 * rule, so a wildcard (`*`, `**`, `.env*`, `config/*.key`) let in every
 * forbidden file it matched at any depth, keys and credentials included, with
 * no word about which: a forbidden file goes in only when named by its own path.
 * Not part of SandboxIncludeGlob: runs recorded before this rule keep parsing
 * (their wildcards now match nothing, workspace/sandbox-export.ts).
 */
export function sandboxIncludeRefusal(glob: string): string | null {
  if (!WILDCARD.test(glob)) return null;
  return `--sandbox-include ${JSON.stringify(glob)} is refused: a wildcard would let every forbidden file it matches (keys, .env files, credentials, at any depth) into the sandbox; name each file the tests need by its path, e.g. --sandbox-include .env.test`;
}

/**
 * A dependency folder of the workspace (node_modules, .venv, Go's vendor) as
 * it enters a run's sandboxes: a read-only volume built once per key
 * (sandbox/dependency-layer.ts), mounted at /workspace/<folder>; the folder is
 * never copied. Fixed when the run is created and kept in its record.
 */
export const DependencyLayerRef = z.strictObject({
  folder: z.enum(["node_modules", ".venv", "venv", "vendor"]),
  /** sha256 hex of the folder's lock files and its exported content */
  key: z.string().check(z.regex(/^[a-f0-9]{64}$/)),
  /** the engine's volume name */
  volume: z.string().check(z.regex(/^mini-agent-layer-[a-f0-9-]{8,100}$/)),
  /** a venv's site-packages, relative to the folder: put on PYTHONPATH (its bin/python names a host interpreter) */
  site_packages: z.optional(z.string().check(z.regex(/^lib\/python3\.[0-9]+\/site-packages$/))),
});
export type DependencyLayerRef = z.infer<typeof DependencyLayerRef>;

/**
 * Why a workspace symlink was left out of the sandbox copy
 * (workspace/export-links.ts): `outside` its resolution leaves the workspace;
 * `dangling` it names nothing; `not_exported` it passes through or ends on
 * something the export rule keeps out (a forbidden file, `.git`, a dependency
 * layer); `loop` more than 40 hops; `too_long` its target is over 1024 bytes.
 */
export const LINK_LEFT_OUT_REASONS = ["outside", "dangling", "not_exported", "loop", "too_long"] as const;
export type LinkLeftOutReason = (typeof LINK_LEFT_OUT_REASONS)[number];

/** At most this many left-out links are named in a result (all are counted). */
export const LINKS_LEFT_OUT_NAMED = 20;

/**
 * The symlinks of a workspace that did not enter a sandbox, counted by reason
 * and the first LINKS_LEFT_OUT_NAMED named (in the run_tests and run_command
 * results as `links_left_out`), so a missing linked file is explained, not a
 * mystery. Never the link's target: it may name a forbidden file.
 */
export const LinksLeftOut = z.strictObject({
  count: z.number().check(z.int(), z.nonnegative()),
  by_reason: z.partialRecord(z.enum(LINK_LEFT_OUT_REASONS), z.number().check(z.int(), z.positive())),
  paths: z.array(z.strictObject({ path: z.string(), reason: z.enum(LINK_LEFT_OUT_REASONS) })).check(z.maxLength(LINKS_LEFT_OUT_NAMED)),
});
export type LinksLeftOut = z.infer<typeof LinksLeftOut>;

/** What of a workspace may be copied into a sandbox; applied by workspace/sandbox-export.ts. */
export interface ExportSpec {
  /** the task's `forbidden` globs, on top of the built-in list (the same ones read_file refuses) */
  forbidden: readonly string[];
  /** the run's explicit opt-in (`--sandbox-include`): lifts the forbidden globs for the exact paths it names */
  include: readonly string[];
  /** the run's dependency layers: these folders are mounted read-only instead of copied (absent: none) */
  layers?: readonly DependencyLayerRef[];
  /**
   * A host folder whose regular files are laid over the workspace copy (same
   * relative paths, replacing the workspace's file): a task's hidden tests, in
   * the Verifier's fresh sandboxes only (verifier/verifier-export.ts). Links and
   * special files in it are refused. Absent: nothing is laid over.
   */
  overlay?: string;
}

/** One command to run in the sandbox. Paths are host paths the executor copies IN; nothing is bind-mounted. */
export interface SandboxRunRequest {
  /** run id and purpose go on the container's labels so the reaper can find it. */
  runId: string;
  purpose: "candidate" | "verifier" | "acceptance" | "probe" | "bench";
  argv: string[];
  /** host directory whose content is copied into /workspace (tar stream). */
  workspaceDir: string;
  /**
   * What of workspaceDir may enter the sandbox. Absent: the built-in forbidden
   * list only (probes, benches); a run always passes its task's globs and opt-ins.
   */
  exportSpec?: ExportSpec;
  /**
   * Called with the opt-in paths (lifted by `include`) each time they have
   * entered a sandbox, so the run can log and trace them. Must not throw.
   */
  onIncluded?: (paths: string[]) => void;
  /** host directory copied to /control, not writable by the sandbox user. */
  controlDir?: string;
  /** only allowlisted names are passed; the daemon's own environment never is. */
  env?: Record<string, string>;
  timeoutMs: number;
  outputCapBytes?: number;
  signal?: AbortSignal;
  /**
   * A report file the command writes inside the sandbox (e.g. JUnit XML at
   * /tmp/mini-agent-junit.xml), read back right after it ends, before the
   * sandbox is settled or removed; at most `maxBytes` are accepted. The result's
   * `report` says what was found. A backend that has no sandbox filesystem
   * (trusted_local) refuses such a request (report_file_unsupported).
   */
  reportFile?: { path: string; maxBytes: number };
  /**
   * List what the command changed under /workspace (created, modified,
   * deleted), at most `maxPaths` paths; the result's `changed` says what was
   * found. Only a warm session can answer (its spawner holds the fingerprint
   * taken when the command started); a fresh sandbox or trusted_local refuses
   * such a request (changed_list_unsupported).
   */
  listChanged?: { maxPaths: number };
}

/**
 * A report file read back from the sandbox: the bytes, or why there are none.
 * Written here because the executor produces it and the parsers
 * (tools/parsers/) read it; contracts import nothing of ours.
 */
export type ReportFile =
  | { status: "read"; bytes: Uint8Array }
  /** no file at the path: the command wrote none (or crashed first) */
  | { status: "missing" }
  /** larger than the cap; `size` when the reader knows it. The bytes are never read. */
  | { status: "too_large"; size: number | null }
  /** it exists but is not a regular file, or reading it failed; `reason` is for people */
  | { status: "unreadable"; reason: string };

/**
 * A limit a command ran into, each known from its own real signal: `time` the
 * deadline passed; `memory` the kernel OOM-killed a process of it; `pids` the
 * pids limit refused a fork or clone; `output` output beyond the cap was dropped.
 */
export const SandboxLimit = z.enum(["time", "memory", "pids", "output"]);
export type SandboxLimit = z.infer<typeof SandboxLimit>;

export interface SandboxResult {
  exit_code: number | null;
  timed_out: boolean;
  cancelled: boolean;
  oom_killed: boolean;
  truncated: boolean;
  /** every limit the command ran into, in this order; [] when none is known to have been reached */
  limits: SandboxLimit[];
  /** the signal that ended the command's own process (the test runner), e.g. "SIGKILL"; null when it exited or no status came back */
  signal: string | null;
  /** no status came back because the sandbox itself stopped under the command (never a pass) */
  sandbox_lost: boolean;
  stdout: string;
  stderr: string;
  duration_ms: number;
  image_digest: string | null;
  runtime: Runtime | "host";
  /** set exactly when the request named a `reportFile` */
  report?: ReportFile;
  /** set exactly when the request asked `listChanged` */
  changed?: ChangedList;
  /** the workspace symlinks the export rule left out of this sandbox copy; absent when none was */
  links_left_out?: LinksLeftOut;
}

/**
 * What a command changed under /workspace, relative paths sorted; these
 * changes stay in the sandbox and are discarded (never copied back).
 * `unavailable`: the list could not be made (the command was stopped, the
 * sandbox was lost, or its start fingerprint was unusable); `reason` says why.
 */
export type ChangedList = { status: "listed"; paths: string[]; truncated: boolean } | { status: "unavailable"; reason: string };

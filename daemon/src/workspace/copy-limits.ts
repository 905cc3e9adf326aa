import { COPY_LIMIT_FLAGS, formatBytes } from "../contracts/copy-limits.js";
import { MiniAgentError } from "../errors.js";
import { SANDBOX_DEFAULTS } from "../sandbox/config.js";
import { dependencySkip } from "./dependency-dirs.js";
import { measureTree, type TreeSize } from "./tree-size.js";

/**
 * How much of a tree may be copied (workspace → baseline, workspace →
 * sandbox, fixture or case repo/ → fresh workspace, eval case load), checked
 * before the first byte is copied. Without it a 1.5 GB sparse file became a
 * 1.5 GB dense copy in the state dir, and a workspace larger than the
 * sandbox's tmpfs failed in every sandbox only minutes later.
 */
export interface CopyLimits {
  /** apparent bytes of all regular files together */
  maxBytes: number;
  /** regular files */
  maxFiles: number;
}

/** Room /workspace keeps for what the tests write themselves (caches, reports, build output). */
const TEST_WRITES_BYTES = 32 * 1024 * 1024;
/** tmpfs gives every file at least one page of its size cap, however small the file. */
const PAGE_BYTES = 4096;

/** The defaults, in one object: what the sandbox's /workspace can hold. */
export const COPY_LIMITS: Readonly<CopyLimits> = {
  maxBytes: SANDBOX_DEFAULTS.workspaceBytes - TEST_WRITES_BYTES,
  // 20,000 one-page files fill 78 MiB of the 128 MiB tmpfs before a byte of content counts
  maxFiles: 20_000,
};

/** Folders never copied anywhere (repository metadata: see sandbox-export.ts), so never counted. */
const NOT_COPIED = new Set([".git", ".hg", ".svn"]);

const MIB = 1024 * 1024;

const count = (n: number) => n.toLocaleString("en-US");
const files = (n: number) => `${count(n)} file${n === 1 ? "" : "s"}`;

/** What is being measured, as the user knows it: "workspace", "case repo/", "fixture repo/". */
export type CopyWhat = "workspace" | "case repo/" | "fixture repo/";

/** null when `size` fits; else the one-line refusal (figure found, the limit and why, the flag that raises it, and a dependency folder's share). */
export function copyRefusal(what: CopyWhat, size: TreeSize, limits: CopyLimits): MiniAgentError | null {
  const found = `${formatBytes(size.bytes)} in ${files(size.files)}`;
  let line: string;
  let limit: "maxBytes" | "maxFiles";
  if (size.bytes > limits.maxBytes) {
    limit = "maxBytes";
    const why =
      limits.maxBytes === COPY_LIMITS.maxBytes
        ? `: the sandbox's ${formatBytes(SANDBOX_DEFAULTS.workspaceBytes)} workspace less room for the tests' own writes`
        : "";
    line = `${what} too large: ${found} (limit ${formatBytes(limits.maxBytes)}${why}); raise with ${COPY_LIMIT_FLAGS.maxBytes}`;
  } else if (size.files > limits.maxFiles) {
    limit = "maxFiles";
    const why = limits.maxFiles === COPY_LIMITS.maxFiles ? `: each file takes at least a ${PAGE_BYTES / 1024} KiB page of the sandbox's workspace` : "";
    line = `${what} has too many files: ${found} (limit ${count(limits.maxFiles)} files${why}); raise with ${COPY_LIMIT_FLAGS.maxFiles}`;
  } else {
    return null;
  }
  const dep = size.dependencyDirs[0];
  // named when it is what tips the copy over, or a good part of it
  const tips = dep !== undefined && (limit === "maxBytes" ? size.bytes - dep.bytes <= limits.maxBytes : size.files - dep.files <= limits.maxFiles);
  const large = dep !== undefined && (limit === "maxBytes" ? dep.bytes * 4 >= size.bytes : dep.files * 4 >= size.files);
  if (dep !== undefined && (tips || large)) {
    line += `; of it, ${dep.rel}/ (a dependency folder) holds ${formatBytes(dep.bytes)} in ${files(dep.files)}`;
  }
  return new MiniAgentError("workspace_too_large", line, {
    details: {
      what,
      limit: limit === "maxBytes" ? "bytes" : "files",
      bytes: size.bytes,
      files: size.files,
      max_bytes: limits.maxBytes,
      max_files: limits.maxFiles,
      flag: COPY_LIMIT_FLAGS[limit],
      ...(dep !== undefined && { dependency_dir: dep.rel }),
    },
  });
}

/**
 * Measures `root` as it would be copied and throws `workspace_too_large` when it does not fit; returns the figures otherwise.
 * A workspace's own dependency folders (at its root: dependency-dirs.ts) are never copied into the baseline or a
 * sandbox's /workspace: they enter as a read-only layer, measured on its own (checkLayerSize). A fixture's or a case's
 * repo/ is copied whole into a fresh workspace first, so it counts them.
 */
export async function checkCopySize(root: string, what: CopyWhat, limits: CopyLimits): Promise<TreeSize> {
  const deps = what === "workspace" ? dependencySkip(root) : () => false;
  const size = await measureTree(root, { skipDir: (rel) => NOT_COPIED.has(rel.slice(rel.lastIndexOf("/") + 1)) || deps(rel) });
  const refusal = copyRefusal(what, size, limits);
  if (refusal) throw refusal;
  return size;
}

/**
 * The last check before a tar goes into a sandbox: what the export holds must
 * fit the sandbox's /workspace tmpfs, counted as tmpfs counts it (whole pages
 * per file). The run-start check cannot see what a run wrote since, nor a
 * limit the user raised past the sandbox; refusing here costs nothing, while
 * the copy would fail with `no space left on device` after minutes.
 */
export function checkExportFits(entries: ReadonlyArray<{ type: "file" | "dir" | "symlink"; stat: { size: bigint } }>, capacityBytes: number): void {
  let bytes = 0;
  let pages = 0;
  let n = 0;
  for (const e of entries) {
    if (e.type !== "file") continue;
    const size = Number(e.stat.size);
    bytes += size;
    pages += Math.max(1, Math.ceil(size / PAGE_BYTES));
    n++;
  }
  if (pages * PAGE_BYTES <= capacityBytes) return;
  throw new MiniAgentError(
    "workspace_too_large",
    `workspace too large for the sandbox: ${formatBytes(bytes)} in ${files(n)} take ${formatBytes(pages * PAGE_BYTES)} of its ${formatBytes(capacityBytes)} /workspace (each file at least a ${PAGE_BYTES / 1024} KiB page); nothing was copied`,
    { details: { what: "sandbox", bytes, files: n, capacity_bytes: capacityBytes } },
  );
}

/**
 * A dependency folder's layer is a volume on the engine's disk, not the
 * tmpfs: far more fits, but a copy still writes every byte out dense (a 1.5 GB
 * sparse file in node_modules/ would become 1.5 GB of volume), so it has its
 * own ceiling, checked before the folder is hashed or copied.
 */
export const LAYER_LIMITS: Readonly<CopyLimits> = { maxBytes: 1024 * MIB, maxFiles: 400_000 };

export async function checkLayerSize(folderAbs: string, folder: string, limits: CopyLimits = LAYER_LIMITS): Promise<void> {
  const size = await measureTree(folderAbs);
  if (size.bytes <= limits.maxBytes && size.files <= limits.maxFiles) return;
  const over = size.bytes > limits.maxBytes ? `limit ${formatBytes(limits.maxBytes)}` : `limit ${count(limits.maxFiles)} files`;
  throw new MiniAgentError(
    "workspace_too_large",
    `dependency folder ${folder}/ too large for its read-only layer: ${formatBytes(size.bytes)} in ${files(size.files)} (${over}; a sparse file counts by its length); remove what the tests do not need from it`,
    { details: { folder, bytes: size.bytes, files: size.files, max_bytes: limits.maxBytes, max_files: limits.maxFiles } },
  );
}

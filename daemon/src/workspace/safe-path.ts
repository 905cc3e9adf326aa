import fs from "node:fs/promises";
import path from "node:path";
import type { Matcher } from "./forbidden.js";
import { entryType, SHAPE_REFUSAL_TEXT, shapeRefusal } from "./sandbox-export.js";

export type PathPurpose = "read" | "write" | "create";

export type SafePathResult =
  | {
      ok: true;
      /** absolute host path; never shown to a model */
      abs: string;
      /** normalized relative path: the only spelling used in results, policy and the ledger */
      rel: string;
      /** what is there now; `absent` only for purpose "create" */
      kind: "file" | "dir" | "absent";
      size: number;
      mode: number;
    }
  | { ok: false; code: "path_denied" | "not_found"; message: string };

export interface SafePathOptions {
  purpose: PathPurpose;
  forbidden: Matcher;
  /** the run's control dir; refused if it happens to sit inside the workspace */
  controlDir?: string;
}

// Windows device names are refused everywhere, also with an extension (`nul.txt`):
// a workspace may be checked out on Windows later, where these open devices.
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;

/**
 * Lexical half of the check, shared with policy (which must classify the same
 * spelling the tools will touch). `.` segments and doubled slashes are dropped;
 * anything else unusual is refused rather than interpreted.
 */
export function normalizeRel(rel: unknown): { ok: true; rel: string } | { ok: false; message: string } {
  if (typeof rel !== "string" || rel.length === 0) return { ok: false, message: "path must be a non-empty relative path" };
  if (rel.length > 512) return { ok: false, message: "path is longer than 512 characters" };
  if (/[\u0000-\u001f\u007f]/.test(rel)) return { ok: false, message: "path contains NUL or control characters" };
  if (rel.includes("\\")) return { ok: false, message: "path must use '/' separators; backslashes are refused" };
  if (rel.startsWith("/") || /^[A-Za-z]:/.test(rel) || rel.startsWith("~")) {
    return { ok: false, message: "path must be relative to the workspace root" };
  }
  const parts: string[] = [];
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") return { ok: false, message: "path must not contain '..'" };
    if (seg.includes(":")) return { ok: false, message: `path segment '${seg}' contains ':'` };
    if (/[. ]$/.test(seg)) return { ok: false, message: `path segment '${seg}' ends with '.' or a space` };
    if (WINDOWS_RESERVED.test(seg)) return { ok: false, message: `path segment '${seg}' is a reserved device name` };
    if (Buffer.byteLength(seg) > 255) return { ok: false, message: "path segment longer than 255 bytes" };
    parts.push(seg);
  }
  if (parts.length === 0) return { ok: false, message: "path names the workspace root, not a file" };
  return { ok: true, rel: parts.join("/") };
}

/** `.`, `./` and the like: a folder argument meaning "the whole workspace" (search only). */
export function isWorkspaceRoot(rel: unknown): boolean {
  return typeof rel === "string" && /^\.(\/+\.?)*\/*$/.test(rel);
}

function isInside(child: string, parent: string): boolean {
  const r = path.relative(parent, child);
  return r === "" || (!r.startsWith("..") && !path.isAbsolute(r));
}

/**
 * Resolves a model-supplied path inside the workspace, or refuses. Every
 * component is lstat'ed: a symlink ANYWHERE on the path is refused (not
 * resolved), as are hard-linked files (nlink > 1: the other name may sit outside
 * the workspace), fifos, sockets and devices. What cannot be proven safe is refused.
 * `root` is trusted (the host chose it) and is resolved with realpath once.
 */
export async function resolveSafePath(root: string, rel: unknown, opts: SafePathOptions): Promise<SafePathResult> {
  const norm = normalizeRel(rel);
  if (!norm.ok) return { ok: false, code: "path_denied", message: norm.message };
  const relPath = norm.rel;
  if (opts.forbidden(relPath)) return { ok: false, code: "path_denied", message: `${relPath} is forbidden by policy` };

  let realRoot: string;
  try {
    realRoot = await fs.realpath(root);
  } catch {
    return { ok: false, code: "not_found", message: "workspace root is missing" };
  }
  const abs = path.join(realRoot, ...relPath.split("/"));
  if (opts.controlDir !== undefined) {
    const control = await fs.realpath(opts.controlDir).catch(() => path.resolve(opts.controlDir as string));
    if (isInside(abs, control) || isInside(control, abs)) {
      return { ok: false, code: "path_denied", message: `${relPath} is the run's control dir` };
    }
  }

  const parts = relPath.split("/");
  let cur = realRoot;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i] as string);
    const shown = parts.slice(0, i + 1).join("/");
    const last = i === parts.length - 1;
    let st: import("node:fs").Stats;
    try {
      st = await fs.lstat(cur);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        if (opts.purpose === "create") return { ok: true, abs, rel: relPath, kind: "absent", size: 0, mode: 0o644 };
        return { ok: false, code: "not_found", message: `${shown} does not exist` };
      }
      return { ok: false, code: "path_denied", message: `${shown} cannot be inspected` };
    }
    const type = entryType(st);
    if (type === "symlink") return { ok: false, code: "path_denied", message: `${shown} ${SHAPE_REFUSAL_TEXT.symlink}` };
    if (!last) {
      if (type !== "dir") return { ok: false, code: "path_denied", message: `${shown} is not a directory` };
      continue;
    }
    // the same shape rule decides what may be copied into a sandbox (sandbox-export.ts)
    const refused = shapeRefusal(type, st.nlink);
    if (refused) return { ok: false, code: "path_denied", message: `${relPath} ${SHAPE_REFUSAL_TEXT[refused]}` };
    if (type === "dir") return { ok: true, abs, rel: relPath, kind: "dir", size: 0, mode: st.mode };
    return { ok: true, abs, rel: relPath, kind: "file", size: st.size, mode: st.mode };
  }
  /* c8 ignore next */
  return { ok: false, code: "path_denied", message: `${relPath} cannot be resolved` };
}

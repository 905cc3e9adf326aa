import crypto from "node:crypto";
import type { RepoFiles } from "./repo-files.js";

/**
 * What a draft was derived from: each read detection made of the folder (a
 * file's text, whether a path is a file or a folder, a folder's listing) and a
 * digest of what it answered. A kept draft is used for its run only while every
 * one of these reads still answers the same (basisChange), so the task a user
 * was shown is the task that runs; checking is a handful of small reads of the
 * same files, not a second draft (no git state is read again).
 */
export interface BasisRead {
  op: "readText" | "isFile" | "isDir" | "listFiles";
  rel: string;
  /** readText's maxBytes, listFiles' limit */
  arg: number | null;
  digest: string;
}

const digestOf = (answer: unknown) =>
  crypto
    .createHash("sha256")
    .update(JSON.stringify(answer ?? null))
    .digest("hex");

function ask(files: RepoFiles, op: BasisRead["op"], rel: string, arg: number | null): unknown {
  switch (op) {
    case "readText":
      return arg === null ? files.readText(rel) : files.readText(rel, arg);
    case "isFile":
      return files.isFile(rel);
    case "isDir":
      return files.isDir(rel);
    case "listFiles":
      return files.listFiles(rel, arg ?? 0);
  }
}

/** `inner`, with every read it answers written down as the draft's basis (each distinct read once). */
export function recordingRepoFiles(inner: RepoFiles): { files: RepoFiles; basis: BasisRead[] } {
  const basis: BasisRead[] = [];
  const seen = new Set<string>();
  function note<T>(op: BasisRead["op"], rel: string, arg: number | null, answer: T): T {
    const key = JSON.stringify([op, rel, arg]);
    if (!seen.has(key)) {
      seen.add(key);
      basis.push({ op, rel, arg, digest: digestOf(answer) });
    }
    return answer;
  }
  const files: RepoFiles = {
    readText: (rel, maxBytes) => note("readText", rel, maxBytes ?? null, inner.readText(rel, maxBytes)),
    isFile: (rel) => note("isFile", rel, null, inner.isFile(rel)),
    isDir: (rel) => note("isDir", rel, null, inner.isDir(rel)),
    listFiles: (rel, limit) => note("listFiles", rel, limit, inner.listFiles(rel, limit)),
  };
  return { files, basis };
}

/** The first path whose read no longer answers as it did for the draft, or null when every one still does. */
export function basisChange(files: RepoFiles, basis: readonly BasisRead[]): string | null {
  for (const b of basis) if (digestOf(ask(files, b.op, b.rel, b.arg)) !== b.digest) return b.rel;
  return null;
}

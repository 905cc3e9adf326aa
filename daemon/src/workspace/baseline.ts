import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { MiniAgentError } from "../errors.js";
import { describeZodError } from "../contracts/common.js";
import { sha256Hex } from "./hash.js";
import { Manifest, manifestDigest } from "./manifest.js";
import { copyNoFollow, readNoFollow } from "./read.js";
import { walkEntries } from "./walk.js";
import { dependencySkip } from "./dependency-dirs.js";

/**
 * The run-start snapshot, kept in the CONTROL dir (outside the workspace) so
 * candidate code can neither compute nor alter it. show_diff and the Verifier's
 * protected-path check compare against it.
 */
export const BASELINE_DIR = "baseline";
const MANIFEST_FILE = "manifest.json";
const FILES_DIR = "files";

/** The baseline's own copy of the workspace's files: the Verifier runs the baseline's tests on it (verifier/baseline-tests.ts). */
export function baselineFilesDir(controlDir: string): string {
  return path.join(controlDir, BASELINE_DIR, FILES_DIR);
}
/**
 * The regular files that were hard-linked (nlink > 1) at run start. The export
 * rule refuses them (their other name may be outside the workspace), and `eval
 * capture` rebuilds a shareable case from this copy, so it must know which
 * they were; the copy itself has one link. Kept beside the manifest, not in it:
 * the manifest's digest is the workspace's, and stays comparable with it.
 */
const LINKS_FILE = "hard-linked.json";

export interface Baseline {
  manifest: Manifest;
  /** baseline bytes of a file, or null when it did not exist at run start; hash-checked on every read */
  readFile(rel: string): Promise<Buffer | null>;
  /**
   * Copies the baseline bytes of a file to `dest` (a new file), streamed and hash-checked as they go:
   * false when it did not exist at run start. Memory does not grow with the file (capture, issue 24).
   */
  copyFileTo(rel: string, dest: string, mode: number): Promise<boolean>;
  /** the file had an execute bit at run start (baselines made before this was kept say false) */
  isExecutable(rel: string): Promise<boolean>;
  /** the files hard-linked at run start (baselines made before this was kept name none) */
  hardLinked: ReadonlySet<string>;
}

function isInside(child: string, parent: string): boolean {
  const r = path.relative(parent, child);
  return r === "" || (!r.startsWith("..") && !path.isAbsolute(r));
}

/**
 * The link itself in the baseline copy, so the Verifier's baseline run sees the linked fixtures the
 * run's own sandboxes see (the export rule then judges it there as in the workspace: without it, a
 * suite's linked tests failed on the baseline and read as fixed by the run). Only a link whose target
 * names a place inside the workspace is made, an absolute one rewritten relative to its folder; one
 * pointing elsewhere is left out here as the export rule leaves it out of every sandbox.
 */
async function copyLink(rel: string, target: string, roots: readonly string[], filesDir: string): Promise<void> {
  if (target === "") return;
  const from = path.posix.dirname(rel);
  const outside = (p: string) => p === ".." || p.startsWith("../") || path.posix.isAbsolute(p);
  // an absolute target may name the workspace by the path it was given or by its real path
  const candidates = path.posix.isAbsolute(target)
    ? roots.map((r) => path.posix.relative(r, path.posix.normalize(target)))
    : [path.posix.normalize(path.posix.join(from, target))];
  const norm = candidates.find((c) => !outside(c));
  if (norm === undefined) return;
  const text = path.posix.isAbsolute(target) ? path.posix.relative(from, norm) || "." : target;
  const dest = path.join(filesDir, ...rel.split("/"));
  await fs.mkdir(path.dirname(dest), { recursive: true });
  await fs.symlink(text, dest);
}

/** Copies every regular file (but dependency folders) and writes the manifest. Refuses to overwrite an existing baseline (resume must reuse it). */
export async function captureBaseline(workspaceRoot: string, controlDir: string): Promise<Baseline> {
  const ws = await fs.realpath(workspaceRoot);
  const control = path.resolve(controlDir);
  if (isInside(control, ws) || isInside(ws, control)) {
    throw new MiniAgentError("invalid_request", "the control dir must be outside the workspace");
  }
  const base = path.join(control, BASELINE_DIR);
  try {
    await fs.mkdir(base, { recursive: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw new MiniAgentError("invalid_request", "a baseline already exists for this run; load it instead", { cause: err });
    }
    await fs.mkdir(control, { recursive: true, mode: 0o700 });
    await fs.mkdir(base);
  }
  const files: Record<string, string> = {};
  const special: Record<string, string> = {};
  const hardLinked: string[] = [];
  const unreadable = (rel: string) => void (special[rel] = "unreadable:dir");
  // dependency folders are the project's environment, not its content: a 150 MB node_modules
  // copied per run filled the state dir (328 MB after 15 runs); they are protected and never written
  for await (const entry of walkEntries(ws, { onUnreadable: unreadable, skip: dependencySkip(ws) })) {
    if (entry.type === "dir") continue;
    if (entry.type === "symlink") {
      const target = await fs.readlink(entry.abs).catch(() => "");
      special[entry.rel] = `symlink:${sha256Hex(target)}`;
      await copyLink(entry.rel, target, [ws, path.resolve(workspaceRoot)], path.join(base, FILES_DIR));
      continue;
    }
    if (entry.type === "other") {
      special[entry.rel] = "special";
      continue;
    }
    const dest = path.join(base, FILES_DIR, ...entry.rel.split("/"));
    await fs.mkdir(path.dirname(dest), { recursive: true });
    // the owner's execute bit is kept (never the others'): `eval capture` rebuilds repo/ from this copy, and a
    // script that was executable at run start must still be; the copy itself is never executed.
    // Streamed, and the hash is of the very bytes written, so the copy and the manifest cannot disagree
    const copied = await copyNoFollow(entry.abs, dest, (Number(entry.stat.mode) & 0o111) !== 0 ? 0o700 : 0o600);
    if (!copied.ok) {
      await fs.rm(dest, { force: true });
      special[entry.rel] = `unreadable:${copied.reason}`;
      continue;
    }
    files[entry.rel] = copied.sha256;
    if (entry.nlink > 1) hardLinked.push(entry.rel);
  }
  const manifest: Manifest = { schema_version: 1, files, special, digest: manifestDigest(files, special) };
  await fs.writeFile(path.join(base, LINKS_FILE), `${JSON.stringify(hardLinked)}\n`, { mode: 0o600 });
  await fs.writeFile(path.join(base, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
  return makeBaseline(base, manifest, new Set(hardLinked));
}

/** Loads and re-checks a captured baseline (schema and digest). */
export async function loadBaseline(controlDir: string): Promise<Baseline> {
  const base = path.join(path.resolve(controlDir), BASELINE_DIR);
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(path.join(base, MANIFEST_FILE), "utf8"));
  } catch (err) {
    throw new MiniAgentError("not_found", "no baseline was captured for this run", { cause: err });
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success) {
    throw new MiniAgentError("schema_version_unsupported", `baseline manifest is invalid: ${describeZodError(parsed.error)}`);
  }
  const m = parsed.data;
  if (manifestDigest(m.files, m.special) !== m.digest) {
    throw new MiniAgentError("internal", "baseline manifest digest does not match its content");
  }
  return makeBaseline(base, m, await readHardLinked(base));
}

async function readHardLinked(base: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await fs.readFile(path.join(base, LINKS_FILE), "utf8");
  } catch {
    return new Set();
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new MiniAgentError("internal", `baseline ${LINKS_FILE} is not JSON`, { cause: err });
  }
  const parsed = z.array(z.string()).safeParse(raw);
  if (!parsed.success) throw new MiniAgentError("internal", `baseline ${LINKS_FILE} is invalid: ${describeZodError(parsed.error)}`);
  return new Set(parsed.data);
}

function makeBaseline(base: string, manifest: Manifest, hardLinked: ReadonlySet<string>): Baseline {
  return {
    manifest,
    hardLinked,
    async readFile(rel: string): Promise<Buffer | null> {
      const expected = manifest.files[rel];
      if (expected === undefined) return null;
      const read = await readNoFollow(path.join(base, FILES_DIR, ...rel.split("/")));
      if (!read.ok || sha256Hex(read.bytes) !== expected) {
        throw new MiniAgentError("internal", `baseline copy of ${rel} is missing or altered`);
      }
      return read.bytes;
    },
    async copyFileTo(rel: string, dest: string, mode: number): Promise<boolean> {
      const expected = manifest.files[rel];
      if (expected === undefined) return false;
      const copied = await copyNoFollow(path.join(base, FILES_DIR, ...rel.split("/")), dest, mode);
      if (!copied.ok || copied.sha256 !== expected) {
        if (copied.ok) await fs.rm(dest, { force: true });
        throw new MiniAgentError("internal", `baseline copy of ${rel} is missing or altered`);
      }
      return true;
    },
    async isExecutable(rel: string): Promise<boolean> {
      if (manifest.files[rel] === undefined) return false;
      const st = await fs.lstat(path.join(base, FILES_DIR, ...rel.split("/")));
      return (st.mode & 0o100) !== 0;
    },
  };
}

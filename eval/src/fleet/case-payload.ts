import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import tarStream from "tar-stream";
import { CASE_FILES } from "../../../daemon/src/contracts/eval-case.js";
import { MiniAgentError } from "../../../daemon/src/errors.js";

/**
 * A case travels in its job as bytes, never as a path on a shared disk
 * (issue 15): the case folder as a tar whose SHA-256 the job names. The
 * packing is deterministic (sorted entries, fixed times and owners, mode from
 * the exec bit only), so one case version is one tar hash on every machine.
 * The worker checks the hash before it reads a byte of the tar, and extracts
 * only regular files and folders under the case root.
 */
export const PAYLOAD_DEFAULTS = {
  /**
   * The cap on one case's tar. A job lives in Redis memory (base64 in the job
   * hash, so ~4/3 of this) until it is removed; the shipped cases are ~20 KiB.
   */
  maxBytes: 4 * 1024 * 1024,
} as const;

export interface CasePayload {
  tar: Buffer;
  sha256: string;
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** The files of a case folder that a case holds (case-load.ts refuses anything else). */
async function listTree(root: string): Promise<Array<{ rel: string; kind: "dir" | "file"; exec: boolean }>> {
  const out: Array<{ rel: string; kind: "dir" | "file"; exec: boolean }> = [];
  const visit = async (abs: string, rel: string): Promise<void> => {
    for (const name of (await fs.readdir(abs)).sort()) {
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const st = await fs.lstat(path.join(abs, name));
      if (st.isDirectory()) {
        out.push({ rel: childRel, kind: "dir", exec: true });
        await visit(path.join(abs, name), childRel);
      } else if (st.isFile()) out.push({ rel: childRel, kind: "file", exec: (st.mode & 0o111) !== 0 });
      else throw new MiniAgentError("case_invalid", `${path.join(abs, name)} is not a regular file or folder; a case holds only those`);
    }
  };
  await visit(root, "");
  return out;
}

export async function packCase(dir: string, maxBytes: number = PAYLOAD_DEFAULTS.maxBytes): Promise<CasePayload> {
  const entries = await listTree(dir);
  let total = 0;
  for (const e of entries) if (e.kind === "file") total += (await fs.stat(path.join(dir, e.rel))).size;
  const tooLarge = (n: number) =>
    new MiniAgentError(
      "case_payload_too_large",
      `the case ${path.basename(dir)} is ${n} bytes packed; a queued case may be at most ${maxBytes} bytes (its repo/ is what to shrink)`,
      { details: { case_dir: dir, bytes: n, max_bytes: maxBytes } },
    );
  // refused before the tar is built: a huge repo/ is never read into memory whole
  if (total > maxBytes) throw tooLarge(total);
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on("data", (c: unknown) => chunks.push(c as Buffer));
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  const fixed = { mtime: new Date(0), uid: 0, gid: 0, uname: "", gname: "" };
  for (const e of entries) {
    if (e.kind === "dir") pack.entry({ ...fixed, name: `${e.rel}/`, type: "directory", mode: 0o755 });
    else pack.entry({ ...fixed, name: e.rel, type: "file", mode: e.exec ? 0o755 : 0o644 }, await fs.readFile(path.join(dir, e.rel)));
  }
  pack.finalize();
  await done;
  const tar = Buffer.concat(chunks);
  if (tar.length > maxBytes) throw tooLarge(tar.length);
  return { tar, sha256: sha256(tar) };
}

const KNOWN_TOP = new Set<string>(Object.values(CASE_FILES));

/**
 * Checks the tar against `expectedSha256` FIRST, then writes it under `into`
 * (which must not exist). Only regular files and folders, only relative paths
 * that stay inside, only a case's top-level names.
 */
export async function unpackCase(tar: Buffer, expectedSha256: string, into: string, maxBytes: number = PAYLOAD_DEFAULTS.maxBytes): Promise<void> {
  if (tar.length > maxBytes) throw new MiniAgentError("case_payload_too_large", `the job's case payload is ${tar.length} bytes; the cap is ${maxBytes}`);
  const actual = sha256(tar);
  if (actual !== expectedSha256)
    throw new MiniAgentError("case_payload_mismatch", `the job's case payload has SHA-256 ${actual}, the job names ${expectedSha256}; it was not used`);
  await fs.mkdir(into, { recursive: false, mode: 0o700 });
  const extract = tarStream.extract();
  const root = path.resolve(into);
  const finished = new Promise<void>((resolve, reject) => {
    extract.on("entry", (header, stream, next) => {
      const fail = (why: string) => {
        reject(new MiniAgentError("case_payload_mismatch", `the job's case payload holds ${JSON.stringify(header.name)}: ${why}`));
        // the promise is settled: the rest of the tar is not read, and no error of the torn stream surfaces
        stream.on("error", () => undefined);
        extract.on("error", () => undefined);
        extract.destroy();
      };
      const rel = header.name.replace(/\/$/, "");
      const target = path.resolve(root, rel);
      if (rel === "" || path.isAbsolute(rel) || rel.split("/").includes("..") || !target.startsWith(`${root}${path.sep}`))
        return fail("a path outside the case");
      if (!KNOWN_TOP.has(rel.split("/")[0]!)) return fail("not a part of a case");
      if (header.type === "directory") {
        fs.mkdir(target, { recursive: true, mode: 0o755 }).then(() => {
          stream.resume();
          next();
        }, reject);
        return;
      }
      if (header.type !== "file") return fail(`a ${header.type}, not a regular file`);
      const parts: Buffer[] = [];
      stream.on("data", (c: unknown) => parts.push(c as Buffer));
      stream.on("end", () => {
        fs.mkdir(path.dirname(target), { recursive: true })
          .then(() => fs.writeFile(target, Buffer.concat(parts), { mode: (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644, flag: "wx" }))
          .then(() => next(), reject);
      });
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  extract.end(tar);
  await finished;
}

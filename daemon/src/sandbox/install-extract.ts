import fs from "node:fs";
import path from "node:path";
import tarStream from "tar-stream";
import { MiniAgentError } from "../errors.js";

/**
 * Writes what an install sandbox produced (the engine's tar of its
 * /workspace/node_modules) into a fresh folder of the daemon's, as DATA: the
 * repository's install scripts made these bytes, so nothing here is trusted.
 * No path leaves `dest` (absolute names and `..` are refused, and nothing is
 * written through a link the tar made: files are opened O_NOFOLLOW|O_EXCL
 * under folders this walk made itself), no special file is made, modes lose
 * set-id bits, and the bytes and file count stop at the layer's limits. The
 * result then goes through the one layer rule (dependency-export.ts) like any
 * node_modules on disk, so forbidden files stay out of the layer.
 */
export interface ExtractLimits {
  maxBytes: number;
  maxFiles: number;
}

function refused(why: string): MiniAgentError {
  return new MiniAgentError("sandbox_error", `the install's result was refused: ${why}`, { details: { why } });
}

/** `name` as a safe relative path under `folder/` (the tar's top entry), or null for the top folder itself. */
function safeRel(name: string, folder: string): string | null {
  const clean = path.posix.normalize(name.replace(/\/+$/, ""));
  if (clean === folder || clean === ".") return null;
  if (path.posix.isAbsolute(clean) || clean.split("/").includes("..") || !clean.startsWith(`${folder}/`))
    throw refused(`${JSON.stringify(name)} is outside ${folder}/`);
  return clean;
}

export async function extractInstalled(
  tar: NodeJS.ReadableStream,
  dest: string,
  folder: string,
  limits: ExtractLimits,
): Promise<{ bytes: number; files: number }> {
  fs.mkdirSync(path.join(dest, folder), { recursive: true, mode: 0o700 });
  const dirs = new Set<string>([folder]);
  const files = new Map<string, string>();
  let bytes = 0;
  let count = 0;
  const extract = tarStream.extract();
  const parentOk = (rel: string) => dirs.has(path.posix.dirname(rel));
  const done = new Promise<void>((resolve, reject) => {
    // the first refusal settles the promise; the rest of the tar is read and dropped (destroying the
    // extractor from inside its own entry event throws past every listener)
    let failed = false;
    const fail = (err: Error, skip: () => void): void => {
      failed = true;
      reject(err);
      skip();
    };
    extract.on("entry", (h, stream, next) => {
      const skip = () => {
        stream.on("end", next);
        stream.resume();
      };
      if (failed) return skip();
      let rel: string | null;
      try {
        rel = safeRel(h.name, folder);
        if (rel !== null && !parentOk(rel)) throw refused(`${JSON.stringify(h.name)} comes before its folder or sits under a link`);
      } catch (err) {
        return fail(err as Error, skip);
      }
      if (rel === null) return skip();
      const r = rel;
      const write = () => {
        const abs = path.join(dest, r);
        if (++count > limits.maxFiles) return fail(refused(`more than ${limits.maxFiles} entries`), skip);
        if (h.type === "directory") {
          fs.mkdirSync(abs, { mode: 0o755 });
          dirs.add(r);
          return skip();
        }
        if (h.type === "symlink") {
          // kept as a link; the layer rule keeps only those that resolve inside the folder
          fs.symlinkSync(h.linkname ?? "", abs);
          return skip();
        }
        if (h.type === "link") {
          // a hard link to a file already written: a copy of its bytes
          const from = h.linkname ? files.get(path.posix.normalize(h.linkname)) : undefined;
          if (from) fs.copyFileSync(from, abs, fs.constants.COPYFILE_EXCL);
          return skip();
        }
        if (h.type !== "file" && h.type !== "contiguous-file") return skip();
        bytes += h.size ?? 0;
        if (bytes > limits.maxBytes) return fail(refused(`more than ${limits.maxBytes} bytes`), skip);
        const mode = (h.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
        const fd = fs.openSync(abs, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
        files.set(r, abs);
        stream.on("data", (chunk: unknown) => fs.writeSync(fd, chunk as Buffer));
        stream.on("end", () => {
          fs.closeSync(fd);
          next();
        });
        stream.on("error", (err) => {
          fs.closeSync(fd);
          reject(err);
        });
      };
      try {
        write();
      } catch (err) {
        fail(err as Error, skip);
      }
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
    // the source (the engine's stream) failing is this extraction failing
    tar.on("error", reject);
  });
  tar.pipe(extract);
  await done;
  return { bytes, files: count };
}

import { once } from "node:events";
import fs from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import tar from "tar-fs";
import tarStream from "tar-stream";
import type { SandboxRunRequest } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { changedWhileCopying, openExported, type ExportEntry } from "../workspace/index.js";

const SANDBOX_ID = 65534;

function checkDir(dir: string, what: string): string {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    throw new MiniAgentError("not_found", `${what} ${dir} does not exist`, { cause: err });
  }
  // the root itself must not be a symlink either: nothing outside it may be packed.
  if (!st.isDirectory()) throw new MiniAgentError("invalid_fields", `${what} ${dir} is not a directory (symlinks are not followed)`);
  return path.resolve(dir);
}

/** Owner can always read and write what it was given; nothing setuid/setgid/sticky (a link's own mode means nothing). */
function sandboxMode(e: ExportEntry): number {
  if (e.type === "symlink") return 0o777;
  return (Number(e.stat.mode) & 0o755) | (e.type === "dir" ? 0o700 : 0o600);
}

export const CHUNK_BYTES = 256 * 1024;

/** putArchive had no deadline; a channel that stops reading must still not hold a run forever */
export const PUT_WORKSPACE_TIMEOUT_MS = 120_000;

export type Sink = ReturnType<tarStream.Pack["entry"]>;
type Header = Parameters<tarStream.Pack["entry"]>[0];

/** One tar entry, its body streamed by `body`; resolves once the pack took it (the layer tar uses it too). */
export function addEntry(pack: tarStream.Pack, header: Header, body?: (sink: Sink) => Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    // a body that fails destroys the entry, which then emits its error: with no listener that was an uncaught
    // exception (the daemon's end); the failure reaches the caller through the callback above, and the pack's own error
    sink.on("error", () => undefined);
    body?.(sink).then(
      () => sink.end(undefined),
      (err: unknown) => sink.destroy(err as Error),
    );
  });
}

/** Exactly `size` bytes from the open file; a file that shrank under us is an error, never a padded copy. */
async function copyBytes(fh: FileHandle, size: number, sink: Sink, rel: string): Promise<void> {
  for (let pos = 0; pos < size; ) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - pos));
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
    if (bytesRead === 0) throw changedWhileCopying(rel);
    pos += bytesRead;
    if (!sink.write(chunk.subarray(0, bytesRead))) await once(sink as unknown as NodeJS.EventEmitter, "drain");
  }
}

/**
 * The exported workspace entries (workspace/sandbox-export.ts decided which)
 * as a tar stream for putArchive into /workspace. Only these entries, in
 * order; each file is opened without following links and checked again on
 * the open descriptor; a link goes in with the target the export rule wrote
 * for it (relative, inside the workspace), never with the host's. Everything
 * is owned by the sandbox user so tests can write their own files.
 */
export function packExport(entries: readonly ExportEntry[]): NodeJS.ReadableStream {
  const pack = tarStream.pack();
  void (async () => {
    for (const e of entries) {
      const header: Header = { name: e.rel, uid: SANDBOX_ID, gid: SANDBOX_ID, mode: sandboxMode(e), mtime: new Date(Number(e.stat.mtimeMs)) };
      if (e.type === "dir") {
        await addEntry(pack, { ...header, type: "directory" });
        continue;
      }
      if (e.type === "symlink") {
        await addEntry(pack, { ...header, type: "symlink", linkname: e.target! });
        continue;
      }
      const { fh, size } = await openExported(e);
      try {
        await addEntry(pack, { ...header, type: "file", size }, (sink) => copyBytes(fh, size, sink, e.rel));
      } finally {
        await fh.close();
      }
    }
    pack.finalize();
  })().catch((err: unknown) => pack.destroy(err as Error));
  return pack as unknown as NodeJS.ReadableStream;
}

/**
 * Tells the run which opted-in paths (`--sandbox-include`) just entered a
 * sandbox, after the copy went in. The hook must not throw; if it does, the
 * copy has still happened and the command still runs.
 */
export function notifyIncluded(req: Pick<SandboxRunRequest, "onIncluded">, sent: readonly ExportEntry[]): void {
  const paths = sent.filter((e) => e.via === "include").map((e) => e.rel);
  if (paths.length === 0 || !req.onIncluded) return;
  try {
    req.onIncluded(paths);
  } catch {
    // the hook's own contract; nothing to undo here
  }
}

/**
 * Control assets (hidden acceptance cases) for /control: owned by root with
 * no write bit anywhere, so the unprivileged sandbox user (no capabilities)
 * can read them but never change them.
 */
export function packControl(dir: string): NodeJS.ReadableStream {
  const root = checkDir(dir, "control dir");
  return tar.pack(root, {
    dereference: false,
    strict: false,
    sort: true,
    map(header) {
      header.uid = 0;
      header.gid = 0;
      header.mode = header.type === "directory" ? 0o555 : (header.mode ?? 0) & 0o111 ? 0o555 : 0o444;
      return header;
    },
  } as tar.PackOptions) as unknown as NodeJS.ReadableStream;
}

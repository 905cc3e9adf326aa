import { createHash } from "node:crypto";
import { once } from "node:events";
import tarStream from "tar-stream";
import { changedWhileCopying, openNoFollow, type LayerEntry } from "../workspace/index.js";
import { addEntry, CHUNK_BYTES } from "./workspace-tar.js";

/**
 * A dependency layer's entries (workspace/dependency-export.ts decided which)
 * as a tar for the engine to extract into the layer's volume. Owned by root
 * with no write bit anywhere: the layer is mounted read-only as well, so a
 * test can read and run what it holds and never change it. Each file is
 * opened without following links and must still be the file that was hashed
 * (same inode and size), and the bytes sent must hash to what the key
 * covers: the layer's key must describe its bytes, even when a file was
 * rewritten in place between the hash and the copy.
 */
export function packLayer(entries: readonly LayerEntry[]): NodeJS.ReadableStream {
  const pack = tarStream.pack();
  void (async () => {
    for (const e of entries) {
      const base = { name: e.rel, uid: 0, gid: 0, mtime: new Date(Number(e.stat.mtimeMs)) };
      if (e.type === "dir") {
        await addEntry(pack, { ...base, type: "directory", mode: 0o555 });
        continue;
      }
      if (e.type === "symlink") {
        await addEntry(pack, { ...base, type: "symlink", linkname: e.target!, mode: 0o777 });
        continue;
      }
      const opened = await openNoFollow(e.abs);
      if (!opened.ok) throw changedWhileCopying(e.rel);
      try {
        const st = await opened.fh.stat({ bigint: true });
        if (!st.isFile() || st.ino !== e.stat.ino || Number(st.size) !== e.size) throw changedWhileCopying(e.rel);
        await addEntry(pack, { ...base, type: "file", size: e.size, mode: e.executable ? 0o555 : 0o444 }, async (sink) => {
          const hash = createHash("sha256");
          for (let pos = 0; pos < e.size; ) {
            const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, e.size - pos));
            const { bytesRead } = await opened.fh.read(chunk, 0, chunk.length, pos);
            if (bytesRead === 0) throw changedWhileCopying(e.rel);
            pos += bytesRead;
            hash.update(chunk.subarray(0, bytesRead));
            if (!sink.write(chunk.subarray(0, bytesRead))) await once(sink as unknown as NodeJS.EventEmitter, "drain");
          }
          // before the entry ends: bytes other than the hashed ones fail the whole tar, so the build, so no volume has them
          if (hash.digest("hex") !== e.sha256) throw changedWhileCopying(e.rel);
        });
      } finally {
        await opened.fh.close();
      }
    }
    pack.finalize();
  })().catch((err: unknown) => pack.destroy(err as Error));
  return pack as unknown as NodeJS.ReadableStream;
}

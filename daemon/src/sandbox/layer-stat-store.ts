import fs from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import { canonicalJson, type DependencyDir, type LayerStatIndex, parseStatIndex, sha256Hex } from "../workspace/index.js";
import { writeRecordFile } from "./record-file.js";

/**
 * Where the stat index of each (workspace, folder) is kept: one file beside
 * the layer records (`stat-<sha256 of workspace and folder>.json`, a name the
 * record listing never takes for a layer). The index only saves reading
 * files again, so it never stops a run: a file that is missing, unreadable,
 * corrupt, of another schema or another workspace reads as none (the folder
 * is hashed whole), and an index that cannot be written is logged and left
 * out.
 */
export class LayerStatStore {
  constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {}

  path(workspace: string, folder: DependencyDir): string {
    return path.join(this.dir, `stat-${sha256Hex(canonicalJson({ workspace, folder }))}.json`);
  }

  read(workspace: string, folder: DependencyDir): LayerStatIndex | null {
    let text: string;
    try {
      text = fs.readFileSync(this.path(workspace, folder), "utf8");
    } catch {
      return null;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      raw = null;
    }
    const index = parseStatIndex(raw, workspace, folder);
    if (index === null) this.log.warn({ workspace, folder }, "stat index of a dependency folder not usable; the folder is hashed whole");
    return index;
  }

  /** Removes every index that led to `key` (its layer was removed); one that cannot be read is left to be ignored. */
  forget(key: string): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir).filter((n) => /^stat-[a-f0-9]{64}\.json$/.test(n));
    } catch {
      return;
    }
    for (const n of names) {
      const file = path.join(this.dir, n);
      try {
        if ((JSON.parse(fs.readFileSync(file, "utf8")) as { key?: unknown } | null)?.key === key) fs.rmSync(file, { force: true });
      } catch {
        // unreadable or not JSON: read() ignores it, and the next keying of its folder writes it anew
      }
    }
  }

  write(index: LayerStatIndex): void {
    try {
      // one line: an index holds an entry per file of the folder, and is read back by this code only
      writeRecordFile(this.dir, this.path(index.workspace, index.folder), index, { compact: true });
    } catch (err) {
      this.log.warn(
        { err, workspace: index.workspace, folder: index.folder },
        "stat index of a dependency folder not written; the next run hashes the folder whole",
      );
    }
  }
}

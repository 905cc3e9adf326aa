import crypto from "node:crypto";
import fs from "node:fs";

/**
 * Writes one record of the layer store (sandbox/dependency-layer.ts, the
 * stat indexes beside it): a temp file in the same folder, then a rename, so a
 * reader finds the whole record or none, never a half-written one after a crash.
 */
export function writeRecordFile(dir: string, file: string, value: unknown, opts: { compact?: boolean } = {}): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${crypto.randomBytes(4).toString("hex")}.tmp`;
  try {
    fs.writeFileSync(tmp, (opts.compact ? JSON.stringify(value) : JSON.stringify(value, null, 2)) + "\n", { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

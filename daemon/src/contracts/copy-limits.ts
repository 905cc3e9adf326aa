/**
 * How a user names the copy limits (workspace/copy-limits.ts holds the limits
 * and the check): the flags and how their values are read, shared by the
 * client (`run`, `eval run`) and the daemon so both read "200M" alike.
 */
export const COPY_LIMIT_FLAGS = { maxBytes: "--max-workspace-bytes", maxFiles: "--max-workspace-files" } as const;

const MIB = 1024 * 1024;

/**
 * `--max-workspace-bytes` takes bytes or a size with a binary unit: 200M,
 * 200MiB, 1G, 512K. Returns null for anything else (zero included).
 */
export function parseByteSize(text: string): number | null {
  const m = /^([0-9]{1,15})\s*(k|kib|m|mib|g|gib)?$/i.exec(text.trim());
  if (!m) return null;
  const unit = { "": 1, k: 1024, kib: 1024, m: MIB, mib: MIB, g: 1024 * MIB, gib: 1024 * MIB }[(m[2] ?? "").toLowerCase()]!;
  const n = Number(m[1]) * unit;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** `212 MiB`, `1.5 GiB`, `0.4 MiB`: a size a person reads at a glance (the other way from parseByteSize). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * MIB) return `${+(bytes / 1024 / MIB).toFixed(1)} GiB`;
  return `${+(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;
}

/** A whole number of files, at least 1 (`--max-workspace-files`); null otherwise. */
export function parseFileCount(text: string): number | null {
  if (!/^[0-9]{1,9}$/.test(text.trim())) return null;
  const n = Number(text);
  return n > 0 ? n : null;
}

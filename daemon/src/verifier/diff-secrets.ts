import path from "node:path";
import { changedPaths, type Manifest } from "../workspace/manifest.js";
import { readNoFollow } from "../workspace/read.js";
import { decodeUtf8 } from "../tools/text.js";
import { addedLines, scanLines, type SecretHit } from "./secret-scan.js";

/** A file larger than this is not scanned (and the evidence says so): a secret is a line, not a bundle. */
export const DIFF_SCAN_FILE_MAX_BYTES = 4 * 1024 * 1024;
/** hits kept in the evidence; the count beyond is said in words */
export const DIFF_SCAN_MAX_HITS = 20;

export interface DiffSecrets {
  hits: SecretHit[];
  /** hits found beyond DIFF_SCAN_MAX_HITS */
  more: number;
  /** changed files that were too large to scan */
  skipped: string[];
}

/**
 * Scans every changed regular file the Verifier sees (forbidden ones too: the
 * scan runs on the host and reports no content) for secrets on ADDED lines.
 * `baselineFile` gives a file's run-start bytes, null when it did not exist;
 * without it (a baseline manifest without its copies) every line counts as added.
 * Binary files (not UTF-8) are not scanned.
 */
export async function scanWorkspaceDiff(input: {
  workspaceRoot: string;
  baseline: Manifest;
  now: Manifest;
  baselineFile: ((rel: string) => Promise<Buffer | null>) | null;
}): Promise<DiffSecrets> {
  const out: DiffSecrets = { hits: [], more: 0, skipped: [] };
  for (const rel of changedPaths(input.baseline, input.now)) {
    if (!(rel in input.now.files)) continue;
    const read = await readNoFollow(path.join(input.workspaceRoot, ...rel.split("/")), { maxBytes: DIFF_SCAN_FILE_MAX_BYTES });
    if (!read.ok) {
      if (read.reason === "too_large") out.skipped.push(rel);
      continue;
    }
    const after = decodeUtf8(read.bytes);
    if (after === null) continue;
    let before: string | null = null;
    if (input.baselineFile !== null && rel in input.baseline.files) {
      const bytes = await input.baselineFile(rel);
      before = bytes === null ? null : decodeUtf8(bytes);
    }
    for (const hit of scanLines(rel, addedLines(before, after))) {
      if (out.hits.length < DIFF_SCAN_MAX_HITS) out.hits.push(hit);
      else out.more++;
    }
  }
  return out;
}

import picomatch from "picomatch";
import type { Manifest } from "../workspace/manifest.js";

/**
 * Test files named by a preset, expanded HOST-side against the manifest (the
 * regular files the verifier just hashed), sorted, each at most once. Node 20's
 * `node --test DIR` silently skips `tests/test_x.js`; naming the files avoids
 * that false green, and a list that matches nothing is refused by the caller.
 */
export function expandPresetFiles(globs: readonly string[], manifest: Manifest): string[] {
  if (globs.length === 0) return [];
  const isMatch = picomatch([...globs], { dot: false });
  return Object.keys(manifest.files)
    .filter((rel) => isMatch(rel))
    .sort();
}

import { canonicalJson } from "../../daemon/src/workspace/hash.js";
import type { Json } from "./types.js";

/**
 * The canonical files must be byte-identical across runs and machines-with-the-
 * same-installation: sorted keys, two-space indentation, a final newline, and no
 * host paths. Known roots are replaced by placeholders; anything that still looks
 * like an absolute host path is refused rather than written.
 */
export function stableStringify(value: unknown): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(value)), null, 2)}\n`;
}

export function replaceRoots(value: Json, roots: ReadonlyArray<readonly [string, string]>): Json {
  if (typeof value === "string") {
    let s = value;
    for (const [abs, token] of roots) if (abs.length > 1) s = s.split(abs).join(token);
    return s;
  }
  if (Array.isArray(value)) return value.map((v) => replaceRoots(v, roots));
  if (value !== null && typeof value === "object") {
    const out: { [k: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[k] = replaceRoots(v, roots);
    return out;
  }
  return value;
}

const ABSOLUTE_HOST_PATH = /(^|[\s"'=:(])\/(tmp|home|root|work|var|Users|private|mnt|opt|srv)\//;

/** Returns the first string that still carries an absolute host path, or null. */
export function findHostPath(value: unknown): string | null {
  if (typeof value === "string") return ABSOLUTE_HOST_PATH.test(value) ? value : null;
  if (Array.isArray(value)) {
    for (const v of value) {
      const f = findHostPath(v);
      if (f !== null) return f;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) {
      const f = findHostPath(v);
      if (f !== null) return f;
    }
  }
  return null;
}

export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

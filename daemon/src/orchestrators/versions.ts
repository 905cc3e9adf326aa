import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Installed versions, read from the package.json files on disk (one of them
 * does not export its package.json), so a trace names exactly what ran.
 */
const here = path.dirname(fileURLToPath(import.meta.url));

function findUp(rel: string): string | null {
  for (let dir = here; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, rel);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

function versionAt(rel: string): string {
  const file = findUp(rel);
  if (!file) return "unknown";
  const v = (JSON.parse(fs.readFileSync(file, "utf8")) as { version?: unknown }).version;
  return typeof v === "string" ? v : "unknown";
}

export function packageVersion(name: string): string {
  return versionAt(path.join("node_modules", name, "package.json"));
}

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * mini-agent's own version: the first package.json above this file that is
 * ours, so the source tree and dist/ read the same file. The daemon's
 * health, the worker's identity and a run's `run_created` (manual
 * orchestrator) all take it from here.
 */
export function miniAgentVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "package.json");
    if (fs.existsSync(candidate)) {
      try {
        const pkg = JSON.parse(fs.readFileSync(candidate, "utf8")) as { name?: unknown; version?: unknown };
        if (pkg.name === "mini-agent" && typeof pkg.version === "string") return pkg.version;
      } catch {
        /* not a JSON we can read: keep looking up */
      }
    }
    if (path.dirname(dir) === dir) return "unknown";
  }
}

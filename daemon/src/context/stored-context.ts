import fs from "node:fs/promises";
import path from "node:path";
import { describeZodError } from "../contracts/common.js";
import { StoredProjectContext, type ProjectContextFacts } from "../contracts/project-context.js";
import { MiniAgentError } from "../errors.js";
import { fileHashCache } from "../workspace/hash-cache.js";
import { canonicalJson } from "../workspace/hash.js";
import { buildProjectContext, projectContextFacts, type ProjectContext, type ProjectContextInput, type ProjectData } from "./project-context.js";

/** Beside the baseline, in the run's control dir (outside every workspace, daemon-owned). */
export const STORED_CONTEXT_FILE = "project-context.json";

/**
 * The project context is built ONCE, when the run is created, and kept here,
 * rather than rebuilt on resume: by then the workspace holds the run's own
 * writes (and whatever else changed), so a rebuild would silently tell the
 * model something other than what the traced digests say it was told.
 * Written to a temporary name and renamed, so a crash leaves no half file.
 */
export async function storeProjectContext(controlDir: string, ctx: ProjectContext): Promise<void> {
  const stored: StoredProjectContext = { schema_version: 1, facts: ctx.facts, rules_text: ctx.rules.text, map_text: ctx.map.text };
  const file = path.join(controlDir, STORED_CONTEXT_FILE);
  await fs.writeFile(`${file}.tmp`, JSON.stringify(stored), { mode: 0o600, flag: "wx" });
  await fs.rename(`${file}.tmp`, file);
}

/**
 * Builds the run's project context once, at creation, keeps it in the control
 * dir and returns the facts to trace as `project_context`. The repo map uses
 * the manifest's hash cache (the baseline just walked the same tree).
 */
export async function prepareProjectContext(input: ProjectContextInput & { controlDir: string }): Promise<ProjectContextFacts> {
  const ctx = await buildProjectContext({ cache: fileHashCache, ...input });
  await storeProjectContext(input.controlDir, ctx);
  return ctx.facts;
}

/**
 * The run's context as it was built: null when the run has none stored (a run
 * created before contexts were kept). The texts must still match the stored
 * digests; a file edited since is refused, never silently used.
 */
export async function loadProjectContext(controlDir: string): Promise<ProjectData | null> {
  let raw: string;
  try {
    raw = await fs.readFile(path.join(controlDir, STORED_CONTEXT_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new MiniAgentError("internal", "the run's project context cannot be read", { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (cause) {
    throw new MiniAgentError("internal", "the run's stored project context is not JSON", { cause });
  }
  const parsed = StoredProjectContext.safeParse(json);
  if (!parsed.success) throw new MiniAgentError("internal", `the run's stored project context is invalid:\n${describeZodError(parsed.error)}`);
  const s = parsed.data;
  const data: ProjectData = {
    rules: { path: s.facts.rules.path, text: s.rules_text, bytes: s.facts.rules.bytes, truncated: s.facts.rules.truncated },
    map: { text: s.map_text, entries: s.facts.repo_map.entries, truncated: s.facts.repo_map.truncated },
  };
  const digests = (f: ProjectContextFacts) => canonicalJson({ rules: f.rules, repo_map: f.repo_map, message_sha256: f.message_sha256 });
  if (digests(projectContextFacts(data)) !== digests(s.facts)) {
    throw new MiniAgentError("internal", "the run's stored project context does not match its digests");
  }
  return data;
}

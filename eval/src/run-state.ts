import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { CaseResult } from "../../daemon/src/contracts/eval-report.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { resolveInside } from "./work-dir.js";

/**
 * The output folder is the eval run's only memory, so running the same command
 * again resumes it:
 *   settings.json       model, runtime, profile: resuming with others is refused
 *   started/<id>.json   attempts and the run id of the case's latest start
 *   cases/<id>.json     the CaseResult, written last (temp + rename): its presence means done
 *   traces/, diffs/     per case; workspaces/<id>.<attempt> exists only while a case runs
 * A case with a started record and no result was interrupted (the eval run or
 * the daemon died): it is run again from a fresh workspace, attempts + 1.
 */
export const EvalSettings = z.strictObject({
  schema_version: z.literal(1),
  model: z.enum(["replay", "live"]),
  runtime: z.enum(["runc", "runsc"]),
  policy_profile: z.string(),
});
export type EvalSettings = z.infer<typeof EvalSettings>;

export const StartedRecord = z.strictObject({ attempts: z.int().min(1), run_id: z.string().nullable(), hash: z.string() });
export type StartedRecord = z.infer<typeof StartedRecord>;

export const OUTPUT_DIRS = ["cases", "started", "traces", "diffs", "workspaces"] as const;

export function openOutput(dir: string, settings: EvalSettings, rerun: boolean): void {
  fs.mkdirSync(dir, { recursive: true });
  // refused before anything is written: a subfolder that is a link out of the output folder (every case file lands below these)
  for (const d of OUTPUT_DIRS) fs.mkdirSync(resolveInside(dir, d), { recursive: true });
  const file = path.join(dir, "settings.json");
  const before = readJson(file, EvalSettings);
  if (before !== null && !rerun) {
    const diff = (["model", "runtime", "policy_profile"] as const).filter((k) => before[k] !== settings[k]);
    if (diff.length > 0)
      throw new MiniAgentError(
        "invalid_request",
        `${dir} holds an eval run with ${diff.map((k) => `${k} ${before[k]}`).join(", ")}; this one has ${diff.map((k) => `${k} ${settings[k]}`).join(", ")}. Use another --output, the same settings, or --rerun to start it over`,
      );
  }
  writeAtomic(file, `${JSON.stringify(settings, null, 2)}\n`);
}

/** What to do with a case: skip it (a result of this version exists), or run it as attempt N (and first cancel an old run that may still be live). */
export type CasePlan = { kind: "skip"; result: CaseResult } | { kind: "run"; attempt: number; staleRunId: string | null };

export function planCase(dir: string, id: string, hash: string, rerun: boolean): CasePlan {
  const result = readJson(casePath(dir, id), CaseResult);
  if (result !== null && result.hash === hash && !rerun) return { kind: "skip", result };
  const started = readJson(startedPath(dir, id), StartedRecord);
  // a result of an older version, or --rerun: a new series of attempts; no result yet: the started one was interrupted
  if (result !== null || started === null || started.hash !== hash)
    return { kind: "run", attempt: 1, staleRunId: result === null ? (started?.run_id ?? null) : null };
  return { kind: "run", attempt: started.attempts + 1, staleRunId: started.run_id };
}

export function markStarted(dir: string, id: string, rec: StartedRecord): void {
  writeAtomic(startedPath(dir, id), `${JSON.stringify(rec)}\n`);
}

/** The result is written last and atomically: a case with a result file is done, whatever happens after. */
export function writeCaseResult(dir: string, result: CaseResult): void {
  writeAtomic(casePath(dir, result.id), `${JSON.stringify(CaseResult.parse(result), null, 2)}\n`);
}

/** Removes an older result (--rerun or a changed case) so a crash mid-case cannot leave it looking done. */
export function dropCaseResult(dir: string, id: string): void {
  fs.rmSync(casePath(dir, id), { force: true });
}

/** Writes `file` whole or not at all (temp beside it, then rename); a failed write leaves no temp behind. */
export function writeAtomic(file: string, text: string, mode = 0o600): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, text, { mode });
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export function workspacePath(dir: string, id: string, attempt: number): string {
  return resolveInside(dir, "workspaces", `${id}.${attempt}`);
}

/** Where a case's trace or diff is written (`traces/<id>.jsonl`, `diffs/<id>.diff`), checked like every path named after a case. */
export function caseFile(dir: string, sub: "traces" | "diffs", name: string): string {
  return resolveInside(dir, sub, name);
}

const casePath = (dir: string, id: string) => resolveInside(dir, "cases", `${id}.json`);
const startedPath = (dir: string, id: string) => resolveInside(dir, "started", `${id}.json`);

/** null when absent or not valid (an invalid result is never trusted as done). */
function readJson<T>(file: string, schema: z.ZodType<T>): T | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

import fs from "node:fs/promises";
import path from "node:path";
import { MiniAgentError, isMiniAgentError } from "../errors.js";
import { CAPTURE_LEFT_OUT_TEXT, type CaseCapturedBody } from "../contracts/api-responses.js";
import { CASE_FILES } from "../contracts/eval-case.js";
import { TERMINAL_STATUSES } from "../contracts/run.js";
import type { Ledger } from "../store/ledger.js";
import { baselineFilesDir, createExportRule, listExport, loadBaseline } from "../workspace/index.js";
import { expectDefaults } from "./expect-defaults.js";
import { groupLeftOut, leftOutOfCase } from "./left-out.js";
import { withStaging } from "./out-dir.js";
import { replayFromMessages } from "./replay.js";

/**
 * `POST /v1/runs/:id/capture` (issue 13): a terminal run becomes a
 * self-contained eval case (contracts/eval-case.ts). repo/ comes from the
 * run's baseline copy in the host's control dir, never from the workspace the
 * run changed; it goes through the export rule sandboxes use (left-out.ts), so
 * what never reached the model or a sandbox never reaches a case either.
 */
export interface CaptureService {
  capture(runId: string, out: string): Promise<CaseCapturedBody>;
}

/** the task's control files, as createRun copied them into the run's control dir (runtime/service-impl.ts) */
const ACCEPTANCE_DIR = "acceptance";

export function createCaptureService(deps: {
  ledger: () => Ledger;
  /** the daemon's state dir: no case is written inside it */
  stateDir: string;
}): CaptureService {
  return {
    async capture(runId, out) {
      const ledger = deps.ledger();
      const run = ledger.getRun(runId);
      if (!TERMINAL_STATUSES.includes(run.status)) {
        throw new MiniAgentError("capture_refused", `run ${runId} is ${run.status}; only a finished run (${TERMINAL_STATUSES.join(", ")}) can be captured`);
      }
      const messages = ledger.listMessages(runId);
      const replay = replayFromMessages(runId, messages);
      let baseline: Awaited<ReturnType<typeof loadBaseline>>;
      try {
        baseline = await loadBaseline(run.record.control_dir);
      } catch (err) {
        throw new MiniAgentError("capture_refused", `run ${runId} has no readable baseline to rebuild repo/ from`, { cause: err });
      }
      // no opt-in: a run's --sandbox-include lifts a forbidden file into ITS sandbox, never into a case others receive
      const rule = createExportRule({ forbidden: run.record.task.forbidden, include: [] });
      // the links the sandboxes got: the baseline copy holds them (workspace/baseline.ts), and the export rule
      // judges them there as in the workspace: each goes into repo/ with the relative target a sandbox got
      const links = await exportedLinks(baselineFilesDir(run.record.control_dir), run.record.task.forbidden);
      // every link is among these; a link whose end the case leaves out (a file hard-linked in the workspace
      // is a plain copy in the baseline) stays with them, the others go into repo/
      const notInCase = leftOutOfCase(rule, baseline.manifest, baseline.hardLinked);
      for (const [rel, target] of links) {
        const end = path.posix.normalize(path.posix.join(path.posix.dirname(rel), target));
        if (notInCase.some((e) => e.path === end || end.startsWith(`${e.path}/`))) links.delete(rel);
      }
      const refused = notInCase.filter((e) => !links.has(e.path));
      const skip = new Set(refused.map((e) => e.path));
      const leftOut = refused.map((e) => e.path);
      const groups = groupLeftOut(rule, refused);
      const why =
        groups.length > 0
          ? `; left out of repo/: ${groups.map((g) => `${g.path}${g.files > 1 ? ` (${g.files} files)` : ""}: ${CAPTURE_LEFT_OUT_TEXT[g.reason]}`).join("; ")}`
          : "";
      const description = `captured from run ${runId} (task ${run.record.task.name}): ${run.status}${run.reason ? ` (${run.reason})` : ""}${why}`;
      const expect = expectDefaults(run, messages, ledger.listActions(runId), description.slice(0, 2048));

      const controlSrc = path.join(run.record.control_dir, ACCEPTANCE_DIR);
      const hasControl = await fs.stat(controlSrc).then(
        (s) => s.isDirectory(),
        () => false,
      );
      const written: string[] = [];
      try {
        await withStaging(out, deps.stateDir, async (staging) => {
          for (const rel of Object.keys(baseline.manifest.files).sort()) {
            if (skip.has(rel)) continue;
            const dest = path.join(staging, CASE_FILES.repo, ...rel.split("/"));
            await fs.mkdir(path.dirname(dest), { recursive: true });
            // streamed and hash-checked on the way: a large file is never held whole
            if (!(await baseline.copyFileTo(rel, dest, (await baseline.isExecutable(rel)) ? 0o755 : 0o644))) continue;
            written.push(`${CASE_FILES.repo}/${rel}`);
          }
          await fs.mkdir(path.join(staging, CASE_FILES.repo), { recursive: true });
          for (const [rel, target] of [...links].sort(([a], [b]) => (a < b ? -1 : 1))) {
            const dest = path.join(staging, CASE_FILES.repo, ...rel.split("/"));
            await fs.mkdir(path.dirname(dest), { recursive: true });
            await fs.symlink(target, dest);
            written.push(`${CASE_FILES.repo}/${rel}`);
          }
          if (hasControl) {
            // copied, never followed: createRun accepted only regular files and folders into it
            await fs.cp(controlSrc, path.join(staging, CASE_FILES.control), { recursive: true, verbatimSymlinks: true, errorOnExist: true });
            for (const rel of await listFiles(path.join(staging, CASE_FILES.control))) written.push(`${CASE_FILES.control}/${rel}`);
          }
          const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
          await fs.writeFile(path.join(staging, CASE_FILES.task), json(run.record.task));
          await fs.writeFile(path.join(staging, CASE_FILES.replay), json(replay));
          await fs.writeFile(path.join(staging, CASE_FILES.expect), json(expect));
          written.push(CASE_FILES.task, CASE_FILES.replay, CASE_FILES.expect);
        });
      } catch (err) {
        if (isMiniAgentError(err)) throw err;
        throw new MiniAgentError("capture_refused", `the case could not be written to ${out}: ${(err as Error).message}`, { cause: err });
      }
      return {
        kind: "case_captured",
        run_id: runId,
        out,
        files: written.sort(),
        left_out: leftOut,
        left_out_groups: groups,
        expect: expect as Record<string, unknown>,
      };
    },
  };
}

/** The links the export rule sends from the baseline copy, by path, with the target a sandbox gets; none when the copy is gone. */
async function exportedLinks(filesDir: string, forbidden: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const list = await listExport(filesDir, { forbidden: [...forbidden], include: [] }).catch(() => null);
  for (const e of list?.entries ?? []) if (e.type === "symlink" && e.target !== undefined) out.set(e.rel, e.target);
  return out;
}

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.push(path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/"));
  }
  return out.sort();
}

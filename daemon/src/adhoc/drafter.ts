import { type Draft, type DraftDeps, type DraftInput, draftTask } from "./draft.js";
import { KeptDrafts, type KeptDraftsOptions } from "./kept-drafts.js";

/** Drafts an ad-hoc task from the user's folder and keeps it for the run that follows; throws typed refusals, prepares nothing. */
export interface TaskDrafter {
  /** drafts the task and keeps it under `draft_id`, which `POST /runs` names to run exactly this draft */
  draft(input: DraftInput): Promise<Draft & { draft_id: string }>;
  /** the kept draft for its run, once (kept-drafts.ts says when it is refused) */
  take(draftId: string, input: DraftInput): Draft;
}

/** Where a draft is said to have been made: the daemon's log, so how often a folder is drafted can be counted. */
export interface DraftLog {
  info(obj: Record<string, unknown>, msg: string): void;
}

export function keptDrafter(deps: DraftDeps, opts: KeptDraftsOptions & { log: DraftLog }): TaskDrafter {
  const kept = new KeptDrafts(opts);
  return {
    async draft(input) {
      const d = await draftTask(input, deps);
      const draftId = kept.keep(input, d);
      opts.log.info({ draft_id: draftId, reads: d.basis.length }, "task drafted");
      return { ...d, draft_id: draftId };
    },
    take: (draftId, input) => kept.take(draftId, input),
  };
}

import crypto from "node:crypto";
import { MiniAgentError } from "../errors.js";
import { basisChange } from "./draft-basis.js";
import type { Draft, DraftInput } from "./draft.js";
import { repoFiles } from "./repo-files.js";

/**
 * Drafts the daemon keeps between `POST /tasks/draft` and the `POST /runs` that
 * follows, so an ad-hoc run starts with exactly the task the user was shown
 * (`run --goal`, `--print-task`), drafted once. In memory: a draft is taken
 * seconds after it was made, by the same client; one the daemon no longer holds
 * (it restarted, or the draft expired) is refused, never drafted again silently.
 */
export interface KeptDraftsOptions {
  now(): number;
  /** how long a draft is kept (default 15 minutes) */
  ttlMs?: number;
  /** how many drafts are kept at most; the oldest go first (default 64) */
  max?: number;
}

export const KEPT_DRAFT_DEFAULTS = { ttlMs: 15 * 60_000, max: 64 } as const;

interface Kept {
  input: string;
  draft: Draft;
  at: number;
}

/** The input a draft was made for, as one comparable string (the order of --writable/--protect counts, as it does for the draft). */
function inputKey(input: DraftInput): string {
  return JSON.stringify([input.workspace, input.goal, input.test ?? null, input.writable, input.protect, input.imageFamily ?? null]);
}

export class KeptDrafts {
  private readonly kept = new Map<string, Kept>();
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(private readonly opts: KeptDraftsOptions) {
    this.ttlMs = opts.ttlMs ?? KEPT_DRAFT_DEFAULTS.ttlMs;
    this.max = opts.max ?? KEPT_DRAFT_DEFAULTS.max;
  }

  /** keeps the draft; its id goes back to the client with it */
  keep(input: DraftInput, draft: Draft): string {
    this.expire();
    while (this.kept.size >= this.max) this.kept.delete(this.kept.keys().next().value!);
    const id = `drf_${crypto.randomBytes(10).toString("hex")}`;
    this.kept.set(id, { input: inputKey(input), draft, at: this.opts.now() });
    return id;
  }

  /**
   * The kept draft, once (a second take of the same id is refused): only for the
   * input it was made for, and only while the folder still answers every read
   * the draft was derived from. Each refusal changes nothing.
   */
  take(id: string, input: DraftInput): Draft {
    this.expire();
    const k = this.kept.get(id);
    this.kept.delete(id);
    if (!k) {
      throw new MiniAgentError(
        "draft_stale",
        `this daemon holds no drafted task ${id} (it was used, it expired after ${this.ttlMs / 60_000} minutes, or the daemon restarted); nothing was started: run again to draft it anew`,
      );
    }
    if (k.input !== inputKey(input)) {
      throw new MiniAgentError("invalid_request", `drafted task ${id} was drafted for another workspace, goal or option; nothing was started`);
    }
    const changed = basisChange(repoFiles(k.draft.workspace), k.draft.basis);
    if (changed !== null) {
      throw new MiniAgentError(
        "draft_stale",
        `the workspace changed since the task was drafted and shown (${changed}); nothing was started: run again to draft it from the folder as it is now`,
        { details: { changed } },
      );
    }
    return k.draft;
  }

  private expire(): void {
    const oldest = this.opts.now() - this.ttlMs;
    for (const [id, k] of this.kept) if (k.at < oldest) this.kept.delete(id);
  }
}

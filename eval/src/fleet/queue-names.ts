import { IMAGE_FAMILIES } from "../../../daemon/src/contracts/sandbox.js";
import type { ImageFamily } from "../../../daemon/src/contracts/test-report.js";

/**
 * The names both sides of a fleet agree on. One queue per (runtime, family):
 * a worker subscribes only to the queues of its own runtime and of the
 * families it serves (`--families`), so a case is never taken by a machine
 * that does not run its sandbox; BullMQ needs no routing of its own.
 */
export function queueName(runtime: "runc" | "runsc", family: ImageFamily): string {
  return `mini-agent-eval-${runtime}-${family}`;
}

/**
 * The queue of a case: live-model cases have queues of their own, so a worker
 * whose isolation report for a family is not fresh and passing leaves them
 * queued (it does not poll that queue) while it keeps taking replay cases.
 */
export function queueFor(runtime: "runc" | "runsc", family: ImageFamily, model: "replay" | "live"): string {
  return model === "live" ? `${queueName(runtime, family)}-live` : queueName(runtime, family);
}

/**
 * Every queue a case can be put on (each runtime, family and model): what `eval cancel` clears, since it
 * cannot know which runtime a run used. `custom`: the custom families the run's cases named (fleet.json),
 * whose queues no fixed list has.
 */
export function allQueueNames(custom: readonly ImageFamily[] = []): string[] {
  const families = [...new Set([...IMAGE_FAMILIES, ...custom])];
  return (["runc", "runsc"] as const).flatMap((rt) => families.flatMap((f) => (["replay", "live"] as const).map((m) => queueFor(rt, f, m))));
}

/** Set by `eval cancel` / Ctrl-C: workers running a case of this eval run cancel its run. Expires on its own. */
export function cancelKey(suiteRun: string): string {
  return `mini-agent-eval:cancel:${suiteRun}`;
}
export const CANCEL_KEY_TTL_S = 24 * 60 * 60;

/** One job per case and eval run: adding it again (a resumed run) finds the same job instead of a second one. */
export function jobIdOf(suiteRun: string, caseId: string, caseHash: string): string {
  return `${suiteRun}-${caseId}-${caseHash.slice(0, 16)}`;
}

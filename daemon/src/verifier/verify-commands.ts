import type { EffectivePolicy } from "../contracts/policy.js";
import type { TaskSpec, VerifyCommand } from "../contracts/task-spec.js";

/**
 * The extra verify commands a run's Verifier runs (issue 12), in this order:
 * the task's, the daemon policy's (its file and the run's profile, resolved in
 * policy/effective.ts), then the workspace policy file's. Each is named by its
 * source (`task:lint`, `policy:tsc`, `workspace:vet`), so two sources may use
 * the same name and neither replaces the other: a workspace file (untrusted
 * content) can only ADD a check, which can only make a run fail, and can never
 * remove or redefine the daemon's.
 */
export interface RunVerifyCommand extends VerifyCommand {
  /** `<source>:<name>`, as the evidence names it */
  label: string;
  /** who wrote it: the task and the daemon's policy are the user's; the workspace file is the repository's (untrusted) */
  source: "task" | "policy" | "workspace";
}

export function runVerifyCommands(task: Pick<TaskSpec, "verify_commands">, policy: EffectivePolicy | undefined): RunVerifyCommand[] {
  const sources: Array<[RunVerifyCommand["source"], readonly VerifyCommand[]]> = [
    ["task", task.verify_commands ?? []],
    ["policy", policy?.verify_commands ?? []],
    ["workspace", policy?.workspace?.verify_commands ?? []],
  ];
  return sources.flatMap(([source, commands]) => commands.map((c) => ({ ...c, command: [...c.command], label: `${source}:${c.name}`, source })));
}

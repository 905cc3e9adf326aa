import path from "node:path";
import { parseCli } from "../../daemon/src/config/cli-args.js";
import { COPY_LIMIT_FLAGS, parseByteSize, parseFileCount } from "../../daemon/src/contracts/copy-limits.js";
import { COPY_LIMITS, type CopyLimits } from "../../daemon/src/workspace/copy-limits.js";
import { concurrencyOf, QUEUE_OPTIONS, queueFlagsOf } from "./fleet/queue-args.js";

export const RUN_USAGE = `usage: mini-agent-client eval run SUITE_DIR... --output DIR [--model replay|live] [--concurrency N]
                               [--runtime runc|runsc] [--policy-profile eval] [--rerun] [--json]
                               [--max-workspace-bytes SIZE] [--max-workspace-files N]
                               [--socket PATH] [--state-dir DIR] [--queue URL [--queue-password-file FILE]]
  SUITE_DIR      a case folder (it has expect.json) or a folder of case folders
  --output DIR   where traces/, diffs/, cases/ and eval-report.json go; running again resumes
  --model        replay (default): each case's replay.json; live: the daemon's live model
  --concurrency  cases run at once, 1..16 (default 1)
  --runtime      the OCI runtime of every case's sandboxes, asked per run (default: the daemon's)
  --policy-profile  the policy profile every run gets (default eval)
  --max-workspace-bytes SIZE, --max-workspace-files N  a case's repo/ is measured before the suite
                 starts (sparse files by their length) and refused over 96 MiB or 20,000 files (exit 64);
                 these raise the limits, for the check and for every case's run (bytes, or 200M, 1G)
  --rerun        run every case again, even those with a result
  --json         one JSON line per finished case on stdout, then a summary line
  --queue URL    run the cases on an eval fleet: one job per case on redis://[:PASSWORD@]HOST:PORT/DB
                 (rediss:// for TLS), taken by mini-agent-worker processes; no local daemon is used
                 (--concurrency is then the workers' business). Ctrl-C cancels the run on the fleet: its
                 queued cases are removed and its running ones cancelled on their workers (exit 4);
                 running the same command again resumes it (cases with a result are kept, the rest
                 run again); so does it after \`eval cancel\`
  --queue-password-file FILE  the queue's password from FILE (its first line; the file must not be
                 readable by group or others), with a --queue URL that holds none: a password
                 in --queue is visible to every user of the machine in \`ps\`
Exit codes: 0 every case passed, 1 a case did not pass, 2 the daemon or the queue is unreachable
  or refused the password (queue_auth_failed), 4 cancelled (Ctrl-C or \`eval cancel\`), 64 usage`;

export { MAX_CONCURRENCY } from "./fleet/queue-args.js";

export interface RunOptions {
  suiteDirs: string[];
  output: string;
  model: "replay" | "live";
  concurrency: number;
  /** absent: the daemon's runtime */
  runtime: "runc" | "runsc" | undefined;
  profile: "interactive" | "ci" | "eval";
  rerun: boolean;
  json: boolean;
  socket: string | undefined;
  stateDir: string | undefined;
  /** an eval fleet's queue URL (eval/src/fleet); absent: the local daemon */
  queue: string | undefined;
  /** --queue-password-file, resolved against cwd; only with --queue */
  queuePasswordFile: string | undefined;
  /** --max-workspace-bytes/-files; absent: the defaults (workspace/copy-limits.ts) */
  maxWorkspaceBytes?: number;
  maxWorkspaceFiles?: number;
}

/** The limits a case's repo/ is checked against: the flags', else the defaults. */
export function copyLimitsOf(opts: Pick<RunOptions, "maxWorkspaceBytes" | "maxWorkspaceFiles">): CopyLimits {
  return { maxBytes: opts.maxWorkspaceBytes ?? COPY_LIMITS.maxBytes, maxFiles: opts.maxWorkspaceFiles ?? COPY_LIMITS.maxFiles };
}

export type ParsedRunArgs = { ok: true; opts: RunOptions } | { ok: false; help: boolean; message: string };

/** Strict: an unknown option or a bad value is a usage error (exit 64) that changes nothing. */
export function parseRunArgs(argv: string[], cwd: string): ParsedRunArgs {
  const parsed = parseCli(argv, {
    output: { type: "string" },
    model: { type: "string" },
    concurrency: { type: "string" },
    runtime: { type: "string" },
    "policy-profile": { type: "string" },
    rerun: { type: "boolean" },
    json: { type: "boolean" },
    socket: { type: "string" },
    "state-dir": { type: "string" },
    ...QUEUE_OPTIONS,
    "max-workspace-bytes": { type: "string" },
    "max-workspace-files": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (!parsed.ok) return { ok: false, help: false, message: parsed.message };
  const v = parsed.values;
  if (v.help) return { ok: false, help: true, message: "" };
  if (parsed.positionals.length === 0) return { ok: false, help: false, message: "give at least one SUITE_DIR" };
  if (v.output === undefined || v.output === "") return { ok: false, help: false, message: "--output DIR is required" };
  const model = v.model ?? "replay";
  if (model !== "replay" && model !== "live") return { ok: false, help: false, message: `--model must be replay or live, not ${model}` };
  const concurrency = concurrencyOf(v.concurrency);
  if (!concurrency.ok) return { ok: false, help: false, message: concurrency.message };
  const runtime = v.runtime;
  if (runtime !== undefined && runtime !== "runc" && runtime !== "runsc")
    return { ok: false, help: false, message: `--runtime must be runc or runsc, not ${runtime}` };
  const profile = v["policy-profile"] ?? "eval";
  if (profile !== "interactive" && profile !== "ci" && profile !== "eval")
    return { ok: false, help: false, message: `--policy-profile must be interactive, ci or eval, not ${profile}` };
  const maxBytes = v["max-workspace-bytes"] === undefined ? undefined : parseByteSize(v["max-workspace-bytes"]);
  if (maxBytes === null) return { ok: false, help: false, message: `${COPY_LIMIT_FLAGS.maxBytes}: a size in bytes, or with K, M or G (binary), at least 1` };
  const maxFiles = v["max-workspace-files"] === undefined ? undefined : parseFileCount(v["max-workspace-files"]);
  if (maxFiles === null) return { ok: false, help: false, message: `${COPY_LIMIT_FLAGS.maxFiles}: a whole number, at least 1` };
  const queue = queueFlagsOf(v, cwd);
  if (!queue.ok) return { ok: false, help: false, message: queue.message };
  return {
    ok: true,
    opts: {
      suiteDirs: parsed.positionals.map((d) => path.resolve(cwd, d)),
      output: path.resolve(cwd, v.output),
      model,
      concurrency: concurrency.value,
      runtime,
      profile,
      rerun: v.rerun === true,
      json: v.json === true,
      socket: v.socket,
      stateDir: v["state-dir"],
      queue: queue.queue,
      queuePasswordFile: queue.passwordFile,
      ...(maxBytes !== undefined && { maxWorkspaceBytes: maxBytes }),
      ...(maxFiles !== undefined && { maxWorkspaceFiles: maxFiles }),
    },
  };
}

import { parseCli } from "../../../daemon/src/config/cli-args.js";
import { usageFail } from "../usage.js";
import path from "node:path";
import { Queue } from "bullmq";
import { EXIT } from "../../../client-lib/index.js";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import type { EvalCommand } from "../command.js";
import { cancelSuite } from "./fleet-cancel.js";
import { readSuiteFamilies, readSuiteRun } from "./fleet-state.js";
import { QUEUE_OPTIONS, queueFlagsOf } from "./queue-args.js";
import { allQueueNames, CANCEL_KEY_TTL_S } from "./queue-names.js";
import { pingQueue } from "./queue-ping.js";
import { resolveQueueTarget } from "./queue-password.js";
import { connectionOptions } from "./queue-url.js";
import { closeAll, redisOf } from "./redis-like.js";

export const CANCEL_USAGE = `usage: mini-agent-client eval cancel --queue URL [--queue-password-file FILE] --output DIR
  Cancels the eval run on the fleet whose output folder is DIR: its queued cases are removed,
  the workers running its cases cancel their runs (no sandbox is left), and an \`eval run\`
  still waiting on it stops (exit 4). Results already written stay; \`eval run\` with the same
  arguments later resumes it: cases with a result are kept, the others run again.
  --queue-password-file FILE  the queue's password from FILE (first line; not readable by group
                 or others), with a --queue URL that holds none
Exit codes: 0 cancelled, 1 DIR holds no eval run on a queue, 2 the queue is unreachable or
  refused the password (queue_auth_failed), 64 usage`;

/** `eval cancel --queue URL --output DIR`: what Ctrl-C on `eval run --queue` does, from another terminal. */
export const cancelCommand: EvalCommand = {
  async main(argv, io) {
    const parsed = parseCli(argv, { ...QUEUE_OPTIONS, output: { type: "string" }, help: { type: "boolean", short: "h" } }, false);
    if (!parsed.ok) return usageFail(io, "eval cancel", parsed.message);
    const v = parsed.values;
    if (v.help) {
      io.out(`${CANCEL_USAGE}\n`);
      return EXIT.ok;
    }
    if (!v.queue || !v.output) return usageFail(io, "eval cancel", "--queue URL and --output DIR are required");
    const queue = queueFlagsOf(v, io.cwd);
    if (!queue.ok) return usageFail(io, "eval cancel", queue.message);
    const target = resolveQueueTarget(v.queue, queue.passwordFile);
    const output = path.resolve(io.cwd, v.output);
    const suiteRun = readSuiteRun(output);
    if (suiteRun === null) throw new MiniAgentError("invalid_request", `${output} holds no eval run on a queue (no fleet.json); nothing was cancelled`);
    const connection = connectionOptions(target);
    // a custom family's queues are known only from the families the run's cases named
    const queues = allQueueNames(readSuiteFamilies(output)).map((name) => new Queue(name, { connection }));
    for (const q of queues) q.on("error", () => undefined);
    try {
      await pingQueue(redisOf(queues[0]!), target.display, undefined, queues[0]);
      const redis = await redisOf(queues[0]!);
      const n = await cancelSuite(redis, queues, suiteRun, CANCEL_KEY_TTL_S);
      io.out(`cancelled: ${n.removed} queued cases removed, ${n.running} running ones told to stop\n`);
      return EXIT.ok;
    } finally {
      await closeAll(queues);
    }
  },
};

/**
 * eval's front door for the programs built on it. mini-agent-worker is the
 * fleet's consumer half: it takes the queue code (fleet/) and the case runner
 * from here, never a copy, so a case runs on a worker exactly as `eval run`
 * runs it. The client enters eval by one other door, the lazily loaded
 * cli.ts (`eval`/`gate`), so its start-up never loads any of this.
 */
export { loadCase } from "./case-load.js";
export { packCase, unpackCase } from "./fleet/case-payload.js";
export { concurrencyOf, MAX_CONCURRENCY, QUEUE_OPTIONS, queueFlagsOf } from "./fleet/queue-args.js";
export { resolveQueueTarget } from "./fleet/queue-password.js";
export { cancelKey, queueFor, queueName } from "./fleet/queue-names.js";
export { pingQueue } from "./fleet/queue-ping.js";
export { connectionOptions, type QueueTarget } from "./fleet/queue-url.js";
export { closeAll, redisOf } from "./fleet/redis-like.js";
export { CaseInterrupted, errorResult, runCase } from "./run-case.js";
export { OUTPUT_DIRS } from "./run-state.js";
export { resolveInside } from "./work-dir.js";

/**
 * The client library: what more than one program that talks to the daemon
 * needs (mini-agent-client, `eval`/`gate`, mini-agent-worker). It is the one
 * home of these helpers so the programs never import each other's internals
 * (docs/architecture.md); each program's own src/ stays its own. Other
 * folders import this file only, never a module behind it.
 */
export { ApiClient, startHint, type ApiTarget } from "./api-client.js";
export type { Clock } from "./clock.js";
export { EXIT, GATE_EXIT, exitForError, exitForStatus, type ExitCode } from "./exit-codes.js";
export { quoteArgv, shellQuote, termSafe } from "./quote.js";
export { resolveTarget } from "./target.js";
export { testLines, verdictLines } from "./test-lines.js";
export { baselineFound, oneLine, verdictWhy } from "./verdict-why.js";

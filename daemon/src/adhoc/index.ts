/** Ad-hoc tasks on the user's own folder: drafting a TaskSpec on the host, and keeping it for its run. */
export { draftTask, type Draft, type DraftDeps, type DraftInput } from "./draft.js";
export { type DraftLog, keptDrafter, type TaskDrafter } from "./drafter.js";
export { DEFAULT_PROTECTED } from "./defaults.js";

/** Ad-hoc tasks on the user's own folder: drafting a TaskSpec on the host. */
export { draftTask, type Draft, type DraftDeps, type DraftInput } from "./draft.js";
export { DEFAULT_PROTECTED } from "./defaults.js";

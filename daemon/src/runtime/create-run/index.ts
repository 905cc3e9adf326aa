/** Creating a run: one use case, from the API request to the run's first trace event. */
export { type CheckedCreate, checkCreateInput, fixtureImageFamily } from "./check-input.js";
export { createRun, type CreateRunPorts } from "./create.js";
export { initialState } from "./initial-state.js";
export { type CreateRunFromRequestPorts, createRunFromRequest } from "./from-request.js";

import { isMiniAgentError } from "./errors.js";

/** Test kit: the code of the MiniAgentError `fn` throws, or "no error"; any other throw is rethrown. */
export function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isMiniAgentError(err)) return err.code;
    throw err;
  }
  return "no error";
}

/** The MiniAgentError `fn` throws, as code and message; any other throw is rethrown, and no throw is an error. */
export function errorOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a MiniAgentError, but nothing was thrown");
}

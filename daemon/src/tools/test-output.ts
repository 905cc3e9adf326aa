/**
 * The node:test parser now lives with the other report parsers in
 * `parsers/node-test.ts`; this re-export keeps run-tests.ts and the Verifier
 * on the same function until they read summaries through `parsers/`.
 */
export { parseNodeTestOutput, type TestOutputSummary, type TestFailure, type ParseOptions } from "./parsers/node-test.js";

import { z } from "zod";
import { Id, describeZodError } from "../contracts/common.js";
import { canonicalJson } from "../workspace/hash.js";

/**
 * The hidden acceptance command prints exactly one JSON document on stdout:
 *   {"schema_version":1,"cases":[{"id":"nested_missing","passed":true,"actual":...,"error":null}]}
 * Parsing is strict on purpose (issue 4): a missing, extra or mistyped field, an
 * unknown, missing or duplicate case id is a protocol error, never "best effort",
 * because a lenient parser is exactly where a wrong "done" slips through.
 *
 *   parseAcceptanceOutput(stdout, expectedIds) -> AcceptanceParse
 *   decideCases(cases, expected) -> which cases pass: the host's decision
 */
export const AcceptanceCase = z.strictObject({
  id: Id,
  passed: z.boolean(),
  /** what the case observed; any JSON value, but the key must be present */
  actual: z.json(),
  error: z.string().max(4096).nullable(),
});
export type AcceptanceCase = z.infer<typeof AcceptanceCase>;

export const AcceptanceOutput = z.strictObject({
  schema_version: z.literal(1),
  cases: z.array(AcceptanceCase).min(1).max(256),
});
export type AcceptanceOutput = z.infer<typeof AcceptanceOutput>;

export type AcceptanceParse = { ok: true; passed: string[]; failed: string[]; cases: AcceptanceCase[] } | { ok: false; error: string };

/** stdout beyond this is not a protocol answer but noise; refuse rather than scan it. */
export const ACCEPTANCE_STDOUT_MAX_BYTES = 262_144;

export function parseAcceptanceOutput(stdout: string, expectedIds: readonly string[]): AcceptanceParse {
  if (Buffer.byteLength(stdout, "utf8") > ACCEPTANCE_STDOUT_MAX_BYTES) {
    return { ok: false, error: `stdout is larger than ${ACCEPTANCE_STDOUT_MAX_BYTES} bytes` };
  }
  const text = stdout.trim();
  if (text === "") return { ok: false, error: "stdout is empty; expected one JSON document" };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: "stdout is not a single JSON document" };
  }
  const parsed = AcceptanceOutput.safeParse(raw);
  if (!parsed.success) return { ok: false, error: boundedSchemaError(describeZodError(parsed.error)) };

  const expected = new Set(expectedIds);
  // ids the task does not know were chosen by whatever ran in the sandbox (candidate
  // code included): counted, never echoed whole, or they become a channel into the trace
  const unknown = parsed.data.cases.filter((c) => !expected.has(c.id)).map((c) => c.id);
  if (unknown.length > 0) return { ok: false, error: `${unknown.length} unknown case id(s), e.g. ${sampleIds(unknown)}` };
  // from here on every id is one of the task's own, so naming it leaks nothing
  const seen = new Set<string>();
  for (const c of parsed.data.cases) {
    if (seen.has(c.id)) return { ok: false, error: `duplicate case id '${c.id}'` };
    seen.add(c.id);
    if (c.passed && c.error !== null) return { ok: false, error: `case '${c.id}' says passed but carries an error` };
  }
  const missing = expectedIds.filter((id) => !seen.has(id));
  if (missing.length > 0) return { ok: false, error: `missing case id(s): ${missing.join(", ")}` };

  const passed = parsed.data.cases
    .filter((c) => c.passed)
    .map((c) => c.id)
    .sort();
  const failed = parsed.data.cases
    .filter((c) => !c.passed)
    .map((c) => c.id)
    .sort();
  return { ok: true, passed, failed, cases: parsed.data.cases };
}

/**
 * zod names what it did not expect (`Unrecognized key: "<any key the sandbox printed>"`),
 * once per case: capped, or those keys become the same channel as unknown ids.
 */
export const SCHEMA_ERROR_MAX_CHARS = 300;

function boundedSchemaError(text: string): string {
  const clean = text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, "");
  return clean.length > SCHEMA_ERROR_MAX_CHARS ? `${clean.slice(0, SCHEMA_ERROR_MAX_CHARS)}…` : clean;
}

/** How much of sandbox-chosen ids an error may quote: a few, cut short, escaped. */
export const UNKNOWN_ID_SAMPLE = { count: 3, chars: 32 } as const;

function sampleIds(ids: readonly string[]): string {
  return ids
    .slice(0, UNKNOWN_ID_SAMPLE.count)
    .map((id) => {
      const printable = id.replace(/[^\x20-\x7e]/g, "");
      const cut = printable.length > UNKNOWN_ID_SAMPLE.chars ? `${printable.slice(0, UNKNOWN_ID_SAMPLE.chars)}…` : printable;
      return JSON.stringify(cut);
    })
    .join(", ");
}

export interface CaseDecision {
  passed: string[];
  failed: string[];
  /** cases the harness reported as passed whose answer is not the expected one */
  claimed_but_wrong: string[];
}

/**
 * The host decides each case: it passes only when the harness reported it
 * passed AND its `actual` equals the task's expected answer (canonical JSON:
 * key order never matters, array order does). The expected answers never
 * enter the sandbox, so code under test can print the harness's lines but not
 * the right answers to inputs it was not given.
 */
export function decideCases(cases: readonly AcceptanceCase[], expected: Readonly<Record<string, unknown>>): CaseDecision {
  const passed: string[] = [];
  const failed: string[] = [];
  const claimedButWrong: string[] = [];
  for (const c of cases) {
    const right = Object.hasOwn(expected, c.id) && canonicalJson(c.actual) === canonicalJson(expected[c.id]);
    if (c.passed && right) passed.push(c.id);
    else {
      failed.push(c.id);
      if (c.passed) claimedButWrong.push(c.id);
    }
  }
  return { passed: passed.sort(), failed: failed.sort(), claimed_but_wrong: claimedButWrong.sort() };
}

import { z } from "zod";
import { REQUIRED_TESTS_MAX } from "../../../daemon/src/contracts/task-spec.js";
import { TEST_ID_MAX_CHARS } from "../../../daemon/src/contracts/test-report.js";

/**
 * One line of SWE-bench's published JSON Lines (princeton-nlp/SWE-bench,
 * SWE-bench_Lite, _Verified): the fields an import needs; every other field
 * (hints_text, created_at, version, environment_setup_commit...) is ignored.
 * In the published files FAIL_TO_PASS and PASS_TO_PASS are JSON-encoded
 * STRINGS holding arrays; an array is accepted too.
 */
const TestIds = z.array(z.string().min(1).max(TEST_ID_MAX_CHARS)).max(REQUIRED_TESTS_MAX);

const IdListField = z.unknown().transform((value, ctx) => {
  let list = value;
  if (typeof value === "string") {
    try {
      list = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "a string that is not JSON (SWE-bench writes the list as a JSON-encoded array of test ids)" });
      return z.NEVER;
    }
  }
  const parsed = TestIds.safeParse(list);
  if (parsed.success) return parsed.data;
  ctx.addIssue({ code: "custom", message: `not a list of test ids (${parsed.error.issues[0]?.message ?? "invalid"})` });
  return z.NEVER;
});

/** A git patch of at most this size: SWE-bench's largest gold patches are a few hundred KiB. */
const PATCH_MAX_CHARS = 4 * 1024 * 1024;

export const SweBenchInstance = z.looseObject({
  /** e.g. `astropy__astropy-12907`: the case folder's name, once made safe */
  instance_id: z.string().min(1).max(128),
  /** `owner/name` */
  repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "owner/name"),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, "a full 40-character commit id"),
  /** the gold patch: the case's replay writes what it changes */
  patch: z.string().max(PATCH_MAX_CHARS),
  /** the tests that judge it: laid over the workspace by the Verifier only */
  test_patch: z.string().max(PATCH_MAX_CHARS),
  FAIL_TO_PASS: IdListField,
  PASS_TO_PASS: IdListField,
  /** the task text, when the line has it */
  problem_statement: z.string().optional(),
});
export type SweBenchInstance = z.infer<typeof SweBenchInstance>;

export type ParsedLine = { ok: true; instance: SweBenchInstance } | { ok: false; why: string };

export function parseInstanceLine(line: string): ParsedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return { ok: false, why: `not valid JSON (${(err as Error).message})` };
  }
  const parsed = SweBenchInstance.safeParse(raw);
  // one line per instance in the output: each problem as `field: what is wrong`
  if (!parsed.success) return { ok: false, why: parsed.error.issues.map((i) => `${i.path.join(".") || "the line"}: ${i.message}`).join("; ") };
  return { ok: true, instance: parsed.data };
}

/** The case folder's name (and the task's name): the instance id, with anything but [A-Za-z0-9_.-] made `_`. */
export function caseIdOf(instanceId: string): string {
  const safe = instanceId.replace(/[^A-Za-z0-9_.-]/g, "_");
  return safe.startsWith(".") ? `_${safe.slice(1)}` : safe;
}

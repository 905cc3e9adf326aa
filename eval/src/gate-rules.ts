import { readFile } from "node:fs/promises";
import { z } from "zod";
import { describeZodError } from "../../daemon/src/contracts/common.js";
import { MiniAgentError } from "../../daemon/src/errors.js";

/**
 * gate.json: the release gate's rules. Every rule has a default (GATE_DEFAULTS);
 * the file may change a threshold, change what a rule's failure means
 * (`block` or `review`), or turn it `off`. Strict: a misspelt rule or key is
 * refused (`gate_rules_invalid` with its path), never silently ignored, since
 * a typo would otherwise quietly weaken the gate.
 */
export const GateOutcome = z.enum(["block", "review", "off"]);
export type GateOutcome = z.infer<typeof GateOutcome>;

const Ratio = z.number().min(0).max(100);
const Count = z.int().min(0).max(1_000_000);

export const GateRulesFile = z.strictObject({
  schema_version: z.literal(1),
  rules: z
    .strictObject({
      /** a case whose expected status is `completed` did not pass */
      completed_case_fails: z.strictObject({ outcome: GateOutcome.optional() }).optional(),
      /** protocol errors no case expected, per tool call (aggregates.unexpected_protocol_error_rate), above max */
      protocol_error_rate: z.strictObject({ outcome: GateOutcome.optional(), max: Ratio.optional() }).optional(),
      /** a case ended completed with its must_write_creatable rule failed */
      regression_test_missing: z.strictObject({ outcome: GateOutcome.optional() }).optional(),
      /** mean tool calls per case up by more than max_increase (0.2 = 20 %) vs the baseline */
      tool_calls_up: z.strictObject({ outcome: GateOutcome.optional(), max_increase: Ratio.optional() }).optional(),
      /** mean tokens per case up by more than max_increase vs the baseline */
      tokens_up: z.strictObject({ outcome: GateOutcome.optional(), max_increase: Ratio.optional() }).optional(),
      /** pass rate down by more than max_drop (0 = any drop) vs the baseline */
      pass_rate_down: z.strictObject({ outcome: GateOutcome.optional(), max_drop: z.number().min(0).max(1).optional() }).optional(),
      /** absolute, off by default: more than max protocol errors that no case expected, in the whole report */
      protocol_errors_max: z.strictObject({ outcome: GateOutcome.optional(), max: Count.optional() }).optional(),
      /** absolute, off by default: a case made more than max tool calls */
      tool_calls_per_case_max: z.strictObject({ outcome: GateOutcome.optional(), max: Count.optional() }).optional(),
    })
    .optional(),
});
export type GateRulesFile = z.infer<typeof GateRulesFile>;

export const GATE_RULES = [
  "completed_case_fails",
  "protocol_error_rate",
  "regression_test_missing",
  "tool_calls_up",
  "tokens_up",
  "pass_rate_down",
  "protocol_errors_max",
  "tool_calls_per_case_max",
] as const;
export type GateRuleName = (typeof GATE_RULES)[number];

/** The rules with every value filled in. */
export interface GateRules {
  completed_case_fails: { outcome: GateOutcome };
  protocol_error_rate: { outcome: GateOutcome; max: number };
  regression_test_missing: { outcome: GateOutcome };
  tool_calls_up: { outcome: GateOutcome; max_increase: number };
  tokens_up: { outcome: GateOutcome; max_increase: number };
  pass_rate_down: { outcome: GateOutcome; max_drop: number };
  protocol_errors_max: { outcome: GateOutcome; max: number };
  tool_calls_per_case_max: { outcome: GateOutcome; max: number };
}

/** All defaults in one place (issue 13, "Release gate"). */
export const GATE_DEFAULTS: GateRules = {
  completed_case_fails: { outcome: "block" },
  protocol_error_rate: { outcome: "block", max: 0.05 },
  regression_test_missing: { outcome: "review" },
  tool_calls_up: { outcome: "review", max_increase: 0.2 },
  tokens_up: { outcome: "review", max_increase: 0.2 },
  pass_rate_down: { outcome: "block", max_drop: 0 },
  // Absolute rules a team turns on in its rules file (README "Release gate"): off by
  // default, since the relative rules above already judge the shipped suite.
  protocol_errors_max: { outcome: "off", max: 0 },
  tool_calls_per_case_max: { outcome: "off", max: 20 },
};

export function resolveGateRules(file: GateRulesFile | null): GateRules {
  const r = file?.rules ?? {};
  return {
    completed_case_fails: { ...GATE_DEFAULTS.completed_case_fails, ...r.completed_case_fails },
    protocol_error_rate: { ...GATE_DEFAULTS.protocol_error_rate, ...r.protocol_error_rate },
    regression_test_missing: { ...GATE_DEFAULTS.regression_test_missing, ...r.regression_test_missing },
    tool_calls_up: { ...GATE_DEFAULTS.tool_calls_up, ...r.tool_calls_up },
    tokens_up: { ...GATE_DEFAULTS.tokens_up, ...r.tokens_up },
    pass_rate_down: { ...GATE_DEFAULTS.pass_rate_down, ...r.pass_rate_down },
    protocol_errors_max: { ...GATE_DEFAULTS.protocol_errors_max, ...r.protocol_errors_max },
    tool_calls_per_case_max: { ...GATE_DEFAULTS.tool_calls_per_case_max, ...r.tool_calls_per_case_max },
  };
}

export function parseGateRules(json: unknown, name: string): GateRules {
  const parsed = GateRulesFile.safeParse(json);
  if (!parsed.success) throw new MiniAgentError("gate_rules_invalid", `${name} is not a valid gate rules file:\n${describeZodError(parsed.error)}`);
  return resolveGateRules(parsed.data);
}

export async function readGateRules(file: string): Promise<GateRules> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new MiniAgentError("gate_rules_invalid", `cannot read the gate rules ${file}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`, {
      cause: err,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new MiniAgentError("gate_rules_invalid", `${file} is not JSON`);
  }
  return parseGateRules(json, file);
}

import type { Json } from "./types.js";

/**
 * One short line per scenario for the terminal: the measured values its check
 * compares, so `passed (5/5)` is not all an operator sees (the README promises
 * the numbers). Printed only: the report files are written from the outcomes,
 * never from this text, so the canonical bytes do not depend on it.
 *
 * Nested facts are flattened to dotted keys (`candidate_tests.passed=3`); a list
 * of scalars is shown whole while short, otherwise by its length; the line is
 * cut at `width` characters with an ellipsis.
 */
export const KEY_NUMBERS_WIDTH = 200;

function scalar(v: Json): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function flatten(value: Json, prefix: string, out: string[]): void {
  if (Array.isArray(value)) {
    const shown = value.every((v) => v === null || typeof v !== "object") ? `[${value.map(scalar).join(",")}]` : "";
    out.push(`${prefix}=${shown !== "" && shown.length <= 60 ? shown : `${value.length} items`}`);
    return;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) out.push(`${prefix}={}`);
    for (const [k, v] of entries) flatten(v, prefix === "" ? k : `${prefix}.${k}`, out);
    return;
  }
  out.push(prefix === "" ? scalar(value) : `${prefix}=${scalar(value)}`);
}

/** The facts `expected` names come first (what the check compares), then whatever else the scenario measured. */
function comparedFirst(observed: Json, expected: Json): Json {
  const isRecord = (v: Json): v is { [k: string]: Json } => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isRecord(observed) || !isRecord(expected)) return observed;
  const out: { [k: string]: Json } = {};
  for (const k of Object.keys(expected)) if (k in observed) out[k] = observed[k]!;
  for (const [k, v] of Object.entries(observed)) if (!(k in out)) out[k] = v;
  return out;
}

export function keyNumbers(observed: Json, expected: Json, width = KEY_NUMBERS_WIDTH): string {
  const parts: string[] = [];
  flatten(comparedFirst(observed, expected), "", parts);
  const line = parts.join(" ");
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

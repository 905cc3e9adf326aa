/**
 * The per-test list every parser fills (`cases`), and the units that could not
 * load (`load_errors`). One home for the rules a run is compared with its
 * baseline by (tools/test-compare.ts): ids are the runner's own names, unique,
 * bounded, free of control characters and of per-run detail (temp paths), so
 * the same suite names the same tests in two runs.
 */
import { type CaseOutcome, type LoadError, MAX_CASES, TEST_ID_MAX_CHARS, type TestCase } from "../../contracts/test-report.js";
import { normalizeRunnerText } from "../runner-text.js";

/** load errors listed with their message; the rest are only counted */
export const MAX_LOAD_ERRORS_LISTED = 20;
/** a load error's message: the runner's first lines, bounded */
export const LOAD_ERROR_MAX_LINES = 10;
export const LOAD_ERROR_MAX_CHARS = 1_000;

/** error > failed > skipped > passed: a duplicate id keeps the worst (pytest writes a test whose teardown errors as two cases) */
const RANK: Record<CaseOutcome, number> = { passed: 0, skipped: 1, failed: 2, error: 3 };

// C0, DEL and C1 controls: an id is shown in terminals and compared as text
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const last = head.charCodeAt(head.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}

/** A test id as the report names it: sandbox paths folded, control characters removed, cut to TEST_ID_MAX_CHARS. */
export function testId(raw: string): string {
  const id = cut(normalizeRunnerText(raw).replace(CONTROL, "").trim(), TEST_ID_MAX_CHARS);
  // an id is never empty (the contract): a nameless case is still one test
  return id === "" ? "(unnamed)" : id;
}

/** The runner's own first lines of a load error: paths folded, at most 10 lines and 1,000 characters. */
export function loadErrorMessage(raw: string): string {
  const lines = normalizeRunnerText(raw)
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(CONTROL, "").trimEnd());
  while (lines.length > 0 && lines[0] === "") lines.shift();
  return cut(lines.slice(0, LOAD_ERROR_MAX_LINES).join("\n").trim(), LOAD_ERROR_MAX_CHARS);
}

export interface CaseListed {
  cases: TestCase[];
  cases_complete: boolean;
  load_error_count: number;
  load_errors: LoadError[];
}

/** Collects cases in report order; a repeated id is merged into its first place with the worst outcome. */
export class CaseList {
  private readonly byId = new Map<string, TestCase>();
  private readonly order: TestCase[] = [];
  private loadErrorCount = 0;
  private readonly loadErrors: LoadError[] = [];

  add(rawId: string, outcome: CaseOutcome): void {
    const id = testId(rawId);
    const seen = this.byId.get(id);
    if (seen !== undefined) {
      if (RANK[outcome] > RANK[seen.outcome]) seen.outcome = outcome;
      return;
    }
    const c: TestCase = { id, outcome };
    this.byId.set(id, c);
    this.order.push(c);
  }

  /** A unit that failed before or outside its tests: one `error` case, counted apart from the tests. */
  loadError(unit: string, message: string): void {
    this.add(unit, "error");
    this.loadErrorCount++;
    if (this.loadErrors.length < MAX_LOAD_ERRORS_LISTED) this.loadErrors.push({ unit: testId(unit), message: loadErrorMessage(message) });
  }

  get loadErrorTotal(): number {
    return this.loadErrorCount;
  }

  /** `listedAll`: false when the parser knows the report names fewer tests than it counts */
  done(listedAll = true): CaseListed {
    const fits = this.order.length <= MAX_CASES;
    return {
      cases: fits ? this.order : this.order.slice(0, MAX_CASES),
      cases_complete: fits && listedAll,
      load_error_count: this.loadErrorCount,
      load_errors: this.loadErrors,
    };
  }
}

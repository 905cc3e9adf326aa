import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import type { EvalIO } from "./command.js";
import { gate, type GateResult } from "./gate.js";
import { gateCommand } from "./gate-command.js";
import { GATE_DEFAULTS, parseGateRules } from "./gate-rules.js";
import { caseHash, makeCase, makeReport, writeReportFolder } from "./report.testkit.js";

const ruleOf = (r: GateResult, name: string) => r.rules.find((x) => x.rule === name)!;

const good = () =>
  makeReport([
    makeCase("linkcheck"),
    makeCase("semverlite"),
    makeCase("always-empty", { verdict: "passed", expected_status: "failed", status: "failed", reason: "no_changes" }),
  ]);

describe("gate rules, each both ways", () => {
  it("completed_case_fails: a case expected to complete that now fails blocks; one expected to fail that fails does not", () => {
    expect(ruleOf(gate(good(), null, GATE_DEFAULTS), "completed_case_fails").outcome).toBe("pass");
    const worse = makeReport([makeCase("linkcheck", { verdict: "failed" }), makeCase("semverlite")]);
    const r = ruleOf(gate(worse, null, GATE_DEFAULTS), "completed_case_fails");
    expect(r.outcome).toBe("block");
    expect(r.observed).toContain("linkcheck: failed");
  });

  it("protocol_error_rate: above the threshold blocks, at or below it passes", () => {
    const rate = (protocol_errors: number) => makeReport([makeCase("a", { tool_calls: 10, protocol_errors })]);
    expect(ruleOf(gate(rate(0), null, GATE_DEFAULTS), "protocol_error_rate").outcome).toBe("pass");
    expect(
      ruleOf(gate(rate(1), null, parseGateRules({ schema_version: 1, rules: { protocol_error_rate: { max: 0.1 } } }, "t")), "protocol_error_rate").outcome,
    ).toBe("pass");
    expect(ruleOf(gate(rate(1), null, GATE_DEFAULTS), "protocol_error_rate").outcome).toBe("block");
  });

  it("regression: protocol errors a case provokes on purpose (require.protocol_errors) do not count, so a suite of refused-call cases passes its own gate; errors beyond them still block", () => {
    const suite = (extra: number) =>
      makeReport([
        makeCase("fix", { tool_calls: 8 }),
        makeCase("unknown-tool", { tool_calls: 1, protocol_errors: 1 + extra, expected_protocol_errors: 1 }),
        makeCase("invalid-fields", { tool_calls: 1, protocol_errors: 1, expected_protocol_errors: 1 }),
      ]);
    const ok = ruleOf(gate(suite(0), null, GATE_DEFAULTS), "protocol_error_rate");
    expect(ok).toMatchObject({ outcome: "pass", observed: "0 % of tool calls unexpected (20 % with the expected ones)" });
    expect(gate(suite(0), null, GATE_DEFAULTS).decision).toBe("allow");
    expect(ruleOf(gate(suite(1), null, GATE_DEFAULTS), "protocol_error_rate").outcome).toBe("block");
  });

  it("a report made before expected protocol errors existed is judged on every error", () => {
    const old = makeReport([makeCase("a", { tool_calls: 10, protocol_errors: 1 })]);
    const { unexpected_protocol_errors: _n, unexpected_protocol_error_rate: _r, ...aggregates } = old.aggregates;
    expect(ruleOf(gate({ ...old, aggregates }, null, GATE_DEFAULTS), "protocol_error_rate")).toMatchObject({
      outcome: "block",
      observed: "10 % of tool calls",
    });
  });

  it("absolute rules from a rules file: any unexpected protocol error blocks, a case over N tool calls asks for review; both off by default", () => {
    const report = makeReport([
      makeCase("a", { tool_calls: 30, protocol_errors: 1 }),
      makeCase("b", { tool_calls: 100, protocol_errors: 1, expected_protocol_errors: 1 }),
    ]);
    expect(ruleOf(gate(report, null, GATE_DEFAULTS), "protocol_errors_max").outcome).toBe("off");
    expect(ruleOf(gate(report, null, GATE_DEFAULTS), "tool_calls_per_case_max").outcome).toBe("off");
    const rules = parseGateRules(
      {
        schema_version: 1,
        rules: {
          protocol_errors_max: { outcome: "block", max: 0 },
          tool_calls_per_case_max: { outcome: "review", max: 50 },
          protocol_error_rate: { outcome: "off" },
        },
      },
      "t",
    );
    const r = gate(report, null, rules);
    expect(ruleOf(r, "protocol_errors_max")).toMatchObject({ outcome: "block", observed: "unexpected protocol errors: 1 (a: 1)" });
    expect(ruleOf(r, "tool_calls_per_case_max")).toMatchObject({ outcome: "review", observed: "cases over it: 1 (b: 100)" });
    expect(r.decision).toBe("block");
    expect(() => parseGateRules({ schema_version: 1, rules: { tool_calls_per_case_max: { max: -1 } } }, "t")).toThrow(/tool_calls_per_case_max/);
  });

  it("regression_test_missing: completed with must_write_creatable failed asks for review; with it passed, or not completed, it passes", () => {
    const withRule = (passed: boolean, status: "completed" | "failed") =>
      makeCase("a", { status, rules: [{ rule: "must_write_creatable", expected: true, observed: passed, passed }] });
    expect(ruleOf(gate(makeReport([withRule(true, "completed")]), null, GATE_DEFAULTS), "regression_test_missing").outcome).toBe("pass");
    expect(ruleOf(gate(makeReport([withRule(false, "failed")]), null, GATE_DEFAULTS), "regression_test_missing").outcome).toBe("pass");
    const r = gate(makeReport([withRule(false, "completed")]), null, GATE_DEFAULTS);
    expect(ruleOf(r, "regression_test_missing").outcome).toBe("review");
    expect(r.decision).toBe("review");
  });

  it("tool_calls_up: more than +20 % vs the baseline asks for review, +20 % exactly passes, no baseline or a baseline of 0 is skipped with a note", () => {
    const calls = (n: number) => makeReport([makeCase("a", { tool_calls: n }), makeCase("b", { tool_calls: n })]);
    expect(ruleOf(gate(calls(12), calls(10), GATE_DEFAULTS), "tool_calls_up").outcome).toBe("pass");
    const up = ruleOf(gate(calls(13), calls(10), GATE_DEFAULTS), "tool_calls_up");
    expect(up.outcome).toBe("review");
    expect(up.observed).toContain("10 -> 13");
    expect(ruleOf(gate(calls(13), null, GATE_DEFAULTS), "tool_calls_up")).toMatchObject({ outcome: "skipped", note: "no baseline" });
    expect(ruleOf(gate(calls(13), calls(0), GATE_DEFAULTS), "tool_calls_up").outcome).toBe("skipped");
  });

  it("tokens_up: mean tokens up by more than the threshold asks for review, a fall passes", () => {
    const tokens = (n: number) => makeReport([makeCase("a", { tokens: { prompt: n, completion: 100 } })]);
    expect(ruleOf(gate(tokens(2000), tokens(1000), GATE_DEFAULTS), "tokens_up").outcome).toBe("review");
    expect(ruleOf(gate(tokens(900), tokens(1000), GATE_DEFAULTS), "tokens_up").outcome).toBe("pass");
  });

  it("pass_rate_down: any drop vs the baseline blocks, the same rate passes, no baseline is skipped", () => {
    const before = makeReport([makeCase("a"), makeCase("b", { expected_status: "failed", status: "failed" })]);
    const after = makeReport([makeCase("a"), makeCase("b", { expected_status: "failed", status: "completed", verdict: "failed" })]);
    expect(ruleOf(gate(before, before, GATE_DEFAULTS), "pass_rate_down").outcome).toBe("pass");
    const r = gate(after, before, GATE_DEFAULTS);
    expect(ruleOf(r, "pass_rate_down")).toMatchObject({ outcome: "block", observed: "pass rate 100 % -> 50 %" });
    expect(ruleOf(gate(after, null, GATE_DEFAULTS), "pass_rate_down").outcome).toBe("skipped");
  });

  it("a rules file can change a rule's outcome or turn it off", () => {
    const worse = makeReport([makeCase("linkcheck", { verdict: "failed" })]);
    const soft = parseGateRules({ schema_version: 1, rules: { completed_case_fails: { outcome: "review" } } }, "t");
    expect(gate(worse, null, soft).decision).toBe("review");
    const off = parseGateRules({ schema_version: 1, rules: { completed_case_fails: { outcome: "off" } } }, "t");
    const r = gate(worse, null, off);
    expect(r.decision).toBe("allow");
    expect(ruleOf(r, "completed_case_fails")).toMatchObject({ outcome: "off" });
  });
});

describe("gate refusals", () => {
  it("refuses reports of different suites, naming the cases only in one of them", () => {
    const other = makeReport([makeCase("linkcheck"), makeCase("wordwrap")]);
    try {
      gate(good(), other, GATE_DEFAULTS);
      expect.unreachable();
    } catch (err) {
      expect(isMiniAgentError(err, "reports_incomparable")).toBe(true);
      expect((err as Error).message).toContain("only in the baseline: wordwrap");
      expect((err as Error).message).toContain("only in the report: always-empty, semverlite");
    }
  });

  it("refuses the same case at another version, naming the case", () => {
    const changed = makeReport([
      makeCase("linkcheck", { hash: caseHash("linkcheck", "v2") }),
      makeCase("semverlite"),
      makeCase("always-empty", { expected_status: "failed", status: "failed" }),
    ]);
    expect(() => gate(good(), changed, GATE_DEFAULTS)).toThrow(/case version differs.*: linkcheck \(/);
  });

  it("refuses a rules file with an unknown rule or key, naming its path", () => {
    for (const bad of [
      { schema_version: 1, rules: { pass_rate_drop: {} } },
      { schema_version: 1, rules: { tokens_up: { max_increse: 0.5 } } },
      { rules: {} },
    ]) {
      try {
        parseGateRules(bad, "gate.json");
        expect.unreachable();
      } catch (err) {
        expect(isMiniAgentError(err, "gate_rules_invalid")).toBe(true);
        expect((err as Error).message).toMatch(/gate\.json is not a valid gate rules file:\n.*(rules|schema_version)/s);
      }
    }
  });
});

describe("mini-agent-client gate", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gate-cmd-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(argv: string[]) {
    let out = "";
    let err = "";
    const io: EvalIO = {
      env: {},
      cwd: dir,
      stderrIsTTY: false,
      stdoutIsTTY: false,
      clock: { now: () => 0 } as unknown as EvalIO["clock"],
      out: (s) => void (out += s),
      err: (s) => void (err += s),
    };
    const code = await gateCommand.main(argv, io);
    return { code, out, err };
  }

  it("allow exits 0, review 10, block 11, and every rule is printed with its observed value, threshold and outcome", async () => {
    const base = good();
    await writeReportFolder(path.join(dir, "base"), base);
    await writeReportFolder(path.join(dir, "same"), base);
    const reviewCases = base.cases.map((c) => (c.id === "linkcheck" ? { ...c, tool_calls: 60 } : c));
    await writeReportFolder(path.join(dir, "review"), makeReport(reviewCases));
    const blockCases = base.cases.map((c) => (c.id === "linkcheck" ? { ...c, verdict: "failed" as const, status: "failed" as const } : c));
    await writeReportFolder(path.join(dir, "block"), makeReport(blockCases));

    const allow = await run(["--report", "same/eval-report.json", "--baseline", "base/eval-report.json"]);
    expect(allow.code).toBe(0);
    for (const rule of Object.keys(GATE_DEFAULTS)) expect(allow.out).toContain(rule);
    expect(allow.out).toContain("at most 5 %");
    expect(allow.out).toMatch(/decision: allow\n$/);

    const review = await run(["--report", "review/eval-report.json", "--baseline", "base/eval-report.json"]);
    expect(review.code).toBe(10);
    expect(review.out).toMatch(/tool_calls_up .*6 -> 24 \(\+300 %\).*review/);

    const block = await run(["--report", "block/eval-report.json", "--baseline", "base/eval-report.json", "--json"]);
    expect(block.code).toBe(11);
    const parsed = JSON.parse(block.out) as GateResult;
    expect(parsed.decision).toBe("block");
    expect(
      parsed.rules
        .filter((r) => r.outcome === "block")
        .map((r) => r.rule)
        .sort(),
    ).toEqual(["completed_case_fails", "pass_rate_down"]);
  });

  it("reports of different runtimes are comparable: the gate judges them and prints the settings that differ", async () => {
    const base = good();
    await writeReportFolder(path.join(dir, "runc"), base);
    await writeReportFolder(path.join(dir, "runsc"), makeReport(base.cases, { settings: { ...base.settings, runtime: "runsc" } }));
    const r = await run(["--report", "runsc/eval-report.json", "--baseline", "runc/eval-report.json"]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toContain("settings differ from the baseline: runtime runc -> runsc\n");
    const same = await run(["--report", "runc/eval-report.json", "--baseline", "runc/eval-report.json", "--json"]);
    expect((JSON.parse(same.out) as GateResult).settings_differ).toEqual([]);
  });

  it("a refused gate exits 12 with the code and message, never 0/10/11 and no stack", async () => {
    await writeFile(path.join(dir, "broken.json"), JSON.stringify({ ...good(), surprise: 1 }));
    await writeFile(path.join(dir, "rules.json"), JSON.stringify({ schema_version: 1, rules: { nope: {} } }));
    await writeReportFolder(path.join(dir, "ok"), good());
    const invalid = await run(["--report", "broken.json"]);
    expect(invalid).toMatchObject({ code: 12 });
    expect(invalid.err).toContain("report_invalid");
    expect(invalid.err).toContain("surprise");
    expect(invalid.err).not.toMatch(/\n\s+at /);
    const rules = await run(["--report", "ok/eval-report.json", "--rules", "rules.json"]);
    expect(rules.code).toBe(12);
    expect(rules.err).toContain("gate_rules_invalid");
    expect((await run(["--report", "missing.json"])).code).toBe(12);
    // an unfinished run: the suite lists a case the report has no result for
    const full = good();
    await writeReportFolder(path.join(dir, "partial"), { ...full, cases: full.cases.slice(1) });
    const partial = await run(["--report", "partial/eval-report.json"]);
    expect(partial.code).toBe(12);
    expect(partial.err).toContain("cannot be gated: its cases do not match its suite");
    expect((await run([])).code).toBe(64);
    expect((await run(["--report", "x", "--bogus"])).code).toBe(64);
  });
});

describe("gate through the client's eval entry", () => {
  it("evalMain('gate') returns the gate's own exit codes: 10 for review, 12 for a refusal, 64 for usage", async () => {
    const { evalMain } = await import("./cli.js");
    const dir = await mkdtemp(path.join(os.tmpdir(), "gate-main-"));
    try {
      const base = good();
      await writeReportFolder(path.join(dir, "base"), base);
      await writeReportFolder(path.join(dir, "new"), makeReport(base.cases.map((c) => ({ ...c, tool_calls: 30 }))));
      await writeReportFolder(path.join(dir, "other"), makeReport([makeCase("wordwrap")]));
      let out = "";
      const io = {
        env: {},
        cwd: dir,
        stderrIsTTY: false,
        stdoutIsTTY: false,
        clock: { now: () => 0 },
        out: (s: string) => void (out += s),
        err: (s: string) => void (out += s),
      };
      const main = (argv: string[]) => evalMain("gate", argv, io as unknown as EvalIO);
      expect(await main(["--report", "new/eval-report.json", "--baseline", "base/eval-report.json"])).toBe(10);
      expect(await main(["--report", "new/eval-report.json", "--baseline", "other/eval-report.json"])).toBe(12);
      expect(out).toContain("reports_incomparable");
      expect(await main(["--baseline", "base/eval-report.json"])).toBe(64);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { DIFF_CAP_BYTES, renderReportHtml, writeReportHtml } from "./report-html.js";
import { HOSTILE_DIFF, hostileReport, makeCase, makeReport, writeReportFolder } from "./report.testkit.js";

describe("eval-report.html", () => {
  it("regression: a case id, reason, rule value or diff holding markup, a script end, control or bidi characters renders as text, never as markup", () => {
    const html = renderReportHtml(hostileReport(), { diff: (rel) => (rel === "diffs/hostile.diff" ? HOSTILE_DIFF : null) });
    // nothing a report holds becomes an element or an executable attribute
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<b>bold/);
    expect(html).not.toMatch(/<i>/);
    expect(html).not.toMatch(/<[^<>]*\son\w+=/i);
    // shown as text, escaped
    expect(html).toContain("x&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;");
    // bidi and control characters are never in the page raw; a visible marker stands for each
    expect(html).not.toMatch(/[\u202E\u2066\u0007\u001b]/);
    expect(html).toContain("&lt;U+202E&gt;evil");
    expect(html).toContain("&lt;U+0007&gt;&lt;U+001B&gt;[31m");
    expect(html).toContain("&lt;U+2066&gt;reason");
  });

  it("is self-contained: a CSP that forbids remote loads, and no URL of anything to fetch", () => {
    const html = renderReportHtml(hostileReport(), { diff: () => HOSTILE_DIFF });
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`);
    expect(html).not.toMatch(/<(link|script|iframe|object|embed|img)\b/i);
    expect(html).not.toMatch(/(src|href)=["']?(https?:|\/\/)/i);
  });

  it("shows the summary, both charts, rule failures and every case with every rule", () => {
    const report = makeReport([
      makeCase("linkcheck", { wall_ms: 3000, tool_calls: 5 }),
      makeCase("wordwrap", { wall_ms: 9000, tool_calls: 11, verdict: "failed" }),
      makeCase("broken", { verdict: "error", status: null, run_id: null, error: "case_invalid: expect.json has an unknown key", rules: [] }),
    ]);
    const html = renderReportHtml(report, { diff: () => null });
    expect(html).toContain("pass rate <b>33.3 %</b> (1 of 3 cases passed)");
    expect(html).toContain("model replay, runtime runc, policy profile eval, concurrency 2");
    expect(html).toContain(report.suite.hash);
    expect(html).toContain('aria-label="verdict and wall time by case"');
    expect(html).toContain('aria-label="wall time per case"');
    expect(html).toContain('aria-label="tool calls per case"');
    expect(html).toMatch(/<tr><th>status<\/th><td>1<\/td>/);
    expect(html).toContain("error: case_invalid: expect.json has an unknown key");
    expect(html.match(/<section class="case"/g)).toHaveLength(3);
  });
});

describe("eval-report.html puts what needs reading first", () => {
  it("lists failed and error cases before passed ones, each with its Verifier reasons and the runner's first lines, escaped, under a verdict bar", () => {
    const report = makeReport([
      makeCase("aa-passed"),
      makeCase("bb-failed", {
        verdict: "failed",
        status: "failed",
        reason: "verification_failed",
        why: [
          "candidate tests: 1 collection error (a test file or package that could not load)",
          "runner error: 1 collection error",
          "  tests/test_x.py: ModuleNotFoundError: No module named '<yaml>'",
        ],
      }),
      makeCase("cc-error", { verdict: "error", status: null, run_id: null, error: "case_invalid", rules: [] }),
    ]);
    const html = renderReportHtml(report, { diff: () => null });
    const order = [...html.matchAll(/<section class="case" id="(case-\d+)"/g)].map((m) => m[1]);
    expect(order).toEqual(["case-1", "case-2", "case-0"]);
    expect(html).toContain("tests/test_x.py: ModuleNotFoundError: No module named &#39;&lt;yaml&gt;&#39;");
    expect(html).toMatch(/<div class="verdict-bar" role="img" aria-label="1 passed, 1 failed, 0 needs_human, 1 error">/);
  });
});

describe("writeReportHtml", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "report-html-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes eval-report.html beside the report, with each case's diff, and leaves no temp file", async () => {
    const out = path.join(dir, "ok");
    await writeReportFolder(out, hostileReport(), { "diffs/hostile.diff": HOSTILE_DIFF, "diffs/linkcheck.diff": "+added line in linkcheck\n" });
    const file = await writeReportHtml(out);
    expect(file).toBe(path.join(out, "eval-report.html"));
    const html = await readFile(file, "utf8");
    expect(html).toContain('<span class="add">+added line in linkcheck</span>');
    expect(html).toContain("alert(2)");
    expect((await readdir(out)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("regression: a diff_file naming a path outside the report folder is not read into the page", async () => {
    const out = path.join(dir, "escape");
    await writeFile(path.join(dir, "secret.diff"), "+TOP SECRET\n");
    await writeReportFolder(out, makeReport([makeCase("a", { diff_file: "../secret.diff" }), makeCase("b", { diff_file: "/etc/passwd" })]));
    const html = await readFile(await writeReportHtml(out), "utf8");
    expect(html).not.toContain("TOP SECRET");
    expect(html).not.toContain("root:");
  });

  it("cuts a diff larger than the cap and says where the whole one is", async () => {
    const out = path.join(dir, "big");
    await writeReportFolder(out, makeReport([makeCase("a")]), { "diffs/a.diff": `+${"y".repeat(DIFF_CAP_BYTES + 10)}\n` });
    const html = await readFile(await writeReportHtml(out), "utf8");
    expect(html).toContain(`cut at ${DIFF_CAP_BYTES} of ${DIFF_CAP_BYTES + 12} bytes; the whole diff is diffs/a.diff`);
    expect(html.length).toBeLessThan(DIFF_CAP_BYTES + 40_000);
  });

  it("regression: a suite with many large diffs still gives a page of bounded size (a budget for all diffs together)", async () => {
    const out = path.join(dir, "budget");
    const diff = `+${"z".repeat(99)}`;
    await writeReportFolder(out, makeReport([makeCase("a"), makeCase("b"), makeCase("c")]), {
      "diffs/a.diff": diff,
      "diffs/b.diff": diff,
      "diffs/c.diff": diff,
    });
    const html = await readFile(await writeReportHtml(out, { perDiff: 1000, page: 150 }), "utf8");
    expect(html).toContain(`+${"z".repeat(99)}</span>`);
    expect(html).toContain("cut at 50 of 100 bytes; the whole diff is diffs/b.diff");
    expect(html).toContain("not shown: this page already holds 150 bytes of diffs; the diff is diffs/c.diff");
  });

  it("refuses an invalid report with report_invalid naming the zod path, and writes nothing", async () => {
    const out = path.join(dir, "invalid");
    const report = makeReport([makeCase("a")]);
    await writeReportFolder(out, report);
    const bad = JSON.parse(await readFile(path.join(out, "eval-report.json"), "utf8"));
    bad.cases[0].verdict = "great";
    await writeFile(path.join(out, "eval-report.json"), JSON.stringify(bad));
    const err = await writeReportHtml(out).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "report_invalid")).toBe(true);
    expect((err as Error).message).toContain("cases[0].verdict");
    expect(await readdir(out)).not.toContain("eval-report.html");
  });
});

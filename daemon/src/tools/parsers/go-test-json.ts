/**
 * `go test -json` output: one JSON event per line (cmd/test2json), read from
 * stdout, with the go command's own non-JSON lines in between (Go before 1.24
 * prints a package that fails to build as the plain line `FAIL\tpkg [build failed]`
 * and its compiler errors on stderr, with no JSON event at all).
 *
 * Rules:
 * - A test is a (package, name) pair; subtests (`TestX/sub`) count as tests of
 *   their own, like the parent (node:test counts both too). Counting every name
 *   keeps a parent's own failure visible when all its subtests pass, and needs
 *   no guessing of a tree from names (a subtest name may itself contain "/").
 * - A name that failed in any run failed (-count=N, or a `pass` line a test
 *   printed after its real `fail`: test2json reads the test's text output, so a
 *   test can make it emit events); one that started and never ended failed; one
 *   that only skipped is skipped; otherwise it passed.
 * - A package that fails to build or set up is a load error named by the
 *   package (listed in `build_failed`): one `error` case, never a test and never
 *   0 of anything; so is a package that failed with no failing test (TestMain or
 *   init exited, a panic outside tests).
 * - A test's id is `import/path/pkg/TestName` (a subtest `.../TestName/sub`).
 * - A package that never reached pass/fail/skip, a stream that does not end
 *   with a newline, or a `{` line that is not an event: refused.
 */
import { z } from "zod";
import { CaseList } from "./cases.js";
import { accepted, cap, refused, resolveParseOptions, type ReportParseOptions, type TestFailure, type TestReportSummary } from "./summary.js";

/**
 * Unknown fields are dropped and unknown actions ignored (Go adds both over
 * time, e.g. `attr`): ignoring one can only leave a test without an end, which
 * counts as failed, or a package without one, which is refused.
 */
const GoEvent = z.object({
  Action: z.string(),
  Package: z.string().optional(),
  Test: z.string().optional(),
  Output: z.string().optional(),
  /** Go 1.24+: set on a package's `fail` when it failed to build */
  FailedBuild: z.string().optional(),
  /** Go 1.24+: build-output / build-fail events name the build, not the package */
  ImportPath: z.string().optional(),
});
type GoEvent = z.infer<typeof GoEvent>;

type Outcome = "pass" | "fail" | "skip";

interface TestState {
  name: string;
  started: boolean;
  outcomes: Set<Outcome>;
  output: string;
  /** position of the first fail event, so failures are listed in stream order */
  failedAt: number;
}

interface PackageState {
  name: string;
  tests: Map<string, TestState>;
  outcomes: Set<Outcome>;
  buildFailed: boolean;
  output: string;
  failedAt: number;
}

const TERMINAL: Record<string, Outcome | undefined> = { pass: "pass", fail: "fail", skip: "skip", bench: "pass" };

/** the runner's own framing lines, which say nothing a failure message needs */
function isFraming(line: string): boolean {
  const t = line.trimStart();
  return (
    t.startsWith("=== RUN") ||
    t.startsWith("=== PAUSE") ||
    t.startsWith("=== CONT") ||
    t.startsWith("--- FAIL") ||
    t.startsWith("--- PASS") ||
    t.startsWith("--- SKIP")
  );
}

class Stream {
  readonly packages = new Map<string, PackageState>();
  /** Go 1.24+ build-output text by package: diagnostics only, it ends nothing */
  readonly buildOutput = new Map<string, string>();
  private seq = 0;

  constructor(private readonly maxChars: number) {}

  pkg(name: string): PackageState {
    let p = this.packages.get(name);
    if (p === undefined) {
      p = { name, tests: new Map(), outcomes: new Set(), buildFailed: false, output: "", failedAt: -1 };
      this.packages.set(name, p);
    }
    return p;
  }

  private append(buffer: string, text: string): string {
    // bounded per test: enough for a message, never the whole stream
    return buffer.length >= this.maxChars * 2 ? buffer : buffer + text;
  }

  event(e: GoEvent): void {
    this.seq++;
    if (e.Package === undefined) {
      if (e.Action === "build-output" && e.ImportPath !== undefined) {
        const name = importPathPackage(e.ImportPath);
        this.buildOutput.set(name, this.append(this.buildOutput.get(name) ?? "", e.Output ?? ""));
      } else if (e.Action === "build-fail" && e.ImportPath !== undefined) {
        this.packageFailure(importPathPackage(e.ImportPath), true);
      }
      return;
    }
    const p = this.pkg(e.Package);
    const outcome = TERMINAL[e.Action];
    if (e.Test === undefined) {
      if (e.Action === "output") {
        p.output = this.append(p.output, e.Output ?? "");
        const line = (e.Output ?? "").trimEnd();
        if (line.startsWith("FAIL") && (line.endsWith("[build failed]") || line.endsWith("[setup failed]"))) p.buildFailed = true;
      } else if (outcome !== undefined) {
        p.outcomes.add(outcome);
        if (outcome === "fail" && p.failedAt < 0) p.failedAt = this.seq;
        if (outcome === "fail" && e.FailedBuild !== undefined) p.buildFailed = true;
      }
      return;
    }
    let t = p.tests.get(e.Test);
    if (t === undefined) {
      t = { name: e.Test, started: false, outcomes: new Set(), output: "", failedAt: -1 };
      p.tests.set(e.Test, t);
    }
    if (e.Action === "run") t.started = true;
    else if (e.Action === "output") t.output = this.append(t.output, e.Output ?? "");
    else if (outcome !== undefined) {
      t.outcomes.add(outcome);
      if (outcome === "fail" && t.failedAt < 0) t.failedAt = this.seq;
    }
  }

  /** `FAIL\tpkg [build failed]` (or any plain `FAIL\tpkg` line) printed by the go command outside the JSON stream */
  packageFailure(pkg: string, build: boolean): void {
    const p = this.pkg(pkg);
    if (build) p.buildFailed = true;
    p.outcomes.add("fail");
    if (p.failedAt < 0) p.failedAt = ++this.seq;
  }
}

/** "example.com/m/x [example.com/m/x.test]" -> "example.com/m/x" */
function importPathPackage(importPath: string): string {
  const space = importPath.indexOf(" ");
  return space === -1 ? importPath : importPath.slice(0, space);
}

/**
 * A non-JSON `FAIL\t<pkg> [build failed]` / `[setup failed]` line, or any other
 * plain `FAIL\t<pkg> ...`: only the go command prints plain lines (a test's
 * output is wrapped in events), so each one is a package that failed.
 */
function plainPackageFailure(line: string): { pkg: string; build: boolean } | null {
  if (!line.startsWith("FAIL\t") && !line.startsWith("FAIL ")) return null;
  const rest = line.slice(5).trim();
  const pkg = rest.split(/\s+/)[0] ?? "";
  if (pkg === "") return null;
  return { pkg, build: rest.endsWith("[build failed]") || rest.endsWith("[setup failed]") };
}

/** The compiler errors for `pkg` that go printed (on stderr, or stdout when merged) under a `# pkg` header. */
function compilerBlockFor(goOutput: string, pkg: string): string {
  const lines = goOutput.split("\n");
  const start = lines.findIndex((l) => l === `# ${pkg}` || l.startsWith(`# ${pkg} `));
  if (start === -1) return "";
  const body: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.startsWith("# ")) break;
    body.push(l);
  }
  return body.join("\n").trim();
}

function messageOf(output: string): string {
  return output
    .split("\n")
    .filter((l) => !isFraming(l))
    .join("\n")
    .trim();
}

export function parseGoTestJson(stdout: string, stderr = "", opts: ReportParseOptions = {}): TestReportSummary {
  const o = resolveParseOptions(opts);
  if (stdout.trim() === "") return refused("go_test_json", "empty", "go test printed nothing on stdout");
  const s = new Stream(o.maxMessageChars);
  const lines = stdout.split("\n");
  const endsWithNewline = stdout.endsWith("\n");
  let events = 0;
  // the go command's own plain lines: with stderr merged into stdout they hold the compiler errors
  const plain: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/\r$/, "");
    if (line.trim() === "") continue;
    const isLast = i === lines.length - 1;
    if (line.startsWith("{")) {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        if (isLast && !endsWithNewline) return refused("go_test_json", "truncated", "the go test -json stream is cut in the middle of an event");
        return refused("go_test_json", "unparsable", `line ${i + 1} starts like a go test -json event but is not JSON`);
      }
      const e = GoEvent.safeParse(raw);
      if (!e.success)
        return refused("go_test_json", "unparsable", `line ${i + 1} is not a go test -json event (${z.prettifyError(e.error).split("\n")[0] ?? ""})`);
      s.event(e.data);
      events++;
      continue;
    }
    const failure = plainPackageFailure(line);
    if (failure !== null) {
      s.packageFailure(failure.pkg, failure.build);
      events++;
    }
    // any other plain line is the go command's own chatter (`# pkg`, compiler errors when stderr is merged)
    else if (plain.length < 1000) plain.push(line);
  }
  if (events === 0) return refused("go_test_json", "unparsable", "no go test -json events in the output (was -json passed?)");
  if (!endsWithNewline) return refused("go_test_json", "truncated", "the go test -json stream does not end with a complete line");
  return summarize(s, `${stderr}\n${plain.join("\n")}`, o);
}

function summarize(s: Stream, goOutput: string, o: Required<ReportParseOptions>): TestReportSummary {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const buildFailed: string[] = [];
  const cases = new CaseList();
  const failing: { at: number; failure: TestFailure }[] = [];
  const fail = (at: number, name: string, message: string): void => {
    failed++;
    failing.push({ at, failure: { name: cap(name, o.maxMessageChars), message: cap(message, o.maxMessageChars) } });
  };
  for (const p of s.packages.values()) {
    if (p.outcomes.size === 0) {
      return refused("go_test_json", "truncated", `package ${p.name} never finished (no pass, fail or skip event): the stream is incomplete`);
    }
    let failedTests = 0;
    for (const t of p.tests.values()) {
      const id = `${p.name}/${t.name}`;
      if (t.outcomes.has("fail") || (t.started && t.outcomes.size === 0)) {
        failedTests++;
        cases.add(id, "failed");
        const why = t.outcomes.has("fail") ? messageOf(t.output) : `the test started and never finished\n${messageOf(t.output)}`.trim();
        fail(t.failedAt < 0 ? Number.MAX_SAFE_INTEGER : t.failedAt, `${t.name} (${p.name})`, why);
      } else if (t.outcomes.has("pass")) {
        passed++;
        cases.add(id, "passed");
      } else if (t.outcomes.has("skip")) {
        skipped++;
        cases.add(id, "skipped");
      }
    }
    if (p.buildFailed) {
      buildFailed.push(p.name);
      const compiler = compilerBlockFor(goOutput, p.name) || (s.buildOutput.get(p.name) ?? "").trim() || messageOf(p.output);
      cases.loadError(p.name, `the package failed to build or set up${compiler === "" ? "" : `:\n${compiler}`}`);
    } else if (p.outcomes.has("fail") && failedTests === 0) {
      cases.loadError(p.name, `the package failed outside any test (TestMain, init or the test binary exited)\n${messageOf(p.output)}`.trim());
    }
  }
  failing.sort((a, b) => a.at - b.at);
  return accepted(
    "go_test_json",
    { passed, failed, skipped },
    { failures: failing.slice(0, o.maxFailures).map((f) => f.failure), build_failed: buildFailed, listed: cases.done() },
  );
}

import path from "node:path";
import { DEFAULT_JEST_REPORT_PATH, DEFAULT_JUNIT_REPORT_PATH } from "../tools/parsers/report-file.js";
import type { ImageFamily, PresetParser } from "../contracts/test-report.js";
import type { Word } from "./argv.js";
import type { RepoFiles } from "./repo-files.js";

/**
 * What a test command becomes: an argv for the sandbox (no shell, no npm, no
 * make in any image), the parser that reads its result, and the family whose
 * image has its program. Recognised runners get a machine-readable report;
 * anything else is exit-code-only, which is weaker and said so in `notes`.
 */
export interface DraftedTest {
  command: string[];
  /** globs expanded host-side and appended to the argv (Node 20's `node --test DIR` pitfall) */
  files: string[];
  parser: PresetParser;
  /** the family the program lives in; null when the program does not tell */
  family: ImageFamily | null;
  notes: string[];
}

export type Interpreted = { ok: true; test: DraftedTest } | { ok: false; reason: string };

const JUNIT = DEFAULT_JUNIT_REPORT_PATH;
/**
 * junit_family=xunit1: each <testcase> then carries `file=`, from which the
 * parser builds pytest's own node id (`tests/test_x.py::Class::test`), the id
 * a run is compared with its baseline by (and SWE-bench's)
 */
export const PYTEST_REPORT_ARGS = ["-o", "junit_family=xunit1", `--junitxml=${JUNIT}`] as const;
/**
 * pytest stops its whole session at a test file that cannot load (a dev dependency the sandbox lacks,
 * a syntax error): no other test runs, and the run checks nothing. With this flag the other files
 * still run and the one that cannot load is reported as a collection error, compared with the
 * baseline like any test.
 */
export const PYTEST_KEEP_GOING = "--continue-on-collection-errors";
const JS_FILES = "{js,mjs,cjs}";

const fail = (reason: string): Interpreted => ({ ok: false, reason });
const ok = (test: DraftedTest): Interpreted => ({ ok: true, test });

/** The program word must name something the sandbox can start, inside the workspace when it is a path. */
function checkProgram(first: Word | undefined): string | null {
  if (first === undefined || first.text.trim() === "") return "it names no program";
  const p = first.text;
  if (p.startsWith("-")) return `it starts with an option (${p}), not a program`;
  if (first.glob) return `its program (${p}) is a glob`;
  if (path.isAbsolute(p)) return `its program (${p}) is an absolute path outside the workspace; name the program (e.g. python3, go, node)`;
  if (p.includes("/") && path.posix.normalize(p).startsWith("..")) return `its program (${p}) is outside the workspace`;
  if (["npm", "npx", "yarn", "pnpm"].includes(p)) return `there is no ${p} in the sandbox; give the command the script runs (e.g. node --test tests/)`;
  if (p === "make") return "there is no make in the sandbox; give the command the target runs";
  if (["sh", "bash", "zsh", "dash"].includes(p)) return "there is no shell in the sandbox; give one plain command";
  return null;
}

function pytest(args: string[]): DraftedTest {
  const notes: string[] = [];
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith("--junitxml") || a.startsWith("--junit-xml")) {
      if (a !== `--junitxml=${JUNIT}`) notes.push(`${a} replaced: the host reads the JUnit report at ${JUNIT}`);
      continue;
    }
    // the report's shape is the host's: `-o junit_family=...` (or `-ojunit_family=...`) is replaced
    const family = a === "-o" && args[i + 1]?.startsWith("junit_family=") ? args[i + 1]! : a.startsWith("-ojunit_family=") ? a.slice(2) : null;
    if (family !== null) {
      if (family !== "junit_family=xunit1") notes.push(`${family} replaced by junit_family=xunit1: the host names tests by their file`);
      if (a === "-o") i++;
      continue;
    }
    kept.push(a);
  }
  const cache = kept.some((a, i) => a === "no:cacheprovider" && kept[i - 1] === "-p") ? [] : ["-p", "no:cacheprovider"];
  // no:cacheprovider: pytest would otherwise write .pytest_cache into the workspace, a change nobody asked for
  const keepGoing = kept.includes(PYTEST_KEEP_GOING) ? [] : [PYTEST_KEEP_GOING];
  if (keepGoing.length > 0) notes.push(`${PYTEST_KEEP_GOING} added: a test file that cannot load is reported and the others still run`);
  return {
    command: ["python3", "-m", "pytest", ...cache, ...keepGoing, ...kept, ...PYTEST_REPORT_ARGS],
    files: [],
    parser: "junit_xml",
    family: "python",
    notes,
  };
}

function goTest(args: string[]): DraftedTest {
  const json = args.includes("-json") || args.includes("--json");
  return { command: ["go", "test", ...(json ? [] : ["-json"]), ...args], files: [], parser: "go_test_json", family: "go", notes: [] };
}

function nodeTest(pre: string[], args: Word[], repo: RepoFiles): DraftedTest {
  const notes: string[] = [];
  const kept: string[] = [];
  const files: string[] = [];
  for (const w of args) {
    if (w.text.startsWith("--test-reporter")) {
      if (w.text !== "--test-reporter=tap") notes.push(`${w.text} replaced by --test-reporter=tap: the host reads TAP`);
      continue;
    }
    if (w.text === "--test") continue;
    if (w.glob) files.push(w.text);
    else if (!w.text.startsWith("-") && repo.isDir(w.text.replace(/\/+$/, "") || ".")) {
      // Node 20 searches a folder only for *.test.js-style names and would run 0 tests from tests/test_x.js
      const dir = w.text.replace(/\/+$/, "");
      files.push(dir === "" || dir === "." ? `**/*.${JS_FILES}` : `${dir}/**/*.${JS_FILES}`);
    } else kept.push(w.text);
  }
  if (files.length > 0) notes.push(`test files named by glob (${files.join(", ")}), expanded by the host`);
  return { command: ["node", ...pre, "--test", "--test-reporter=tap", ...kept], files, parser: "node_test", family: "node", notes };
}

/** package.json names `name` among its dependencies (any kind) */
function declares(repo: RepoFiles, name: string): boolean {
  try {
    const pkg = JSON.parse(repo.readText("package.json") ?? "{}") as Record<string, unknown>;
    return ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"].some((k) => {
      const deps = pkg[k];
      return typeof deps === "object" && deps !== null && Object.hasOwn(deps, name);
    });
  } catch {
    return false;
  }
}

type Entry = { ok: true; entry: string; notes: string[] } | { ok: false; reason: string };

/**
 * Where a runner's script is: its own file when node_modules is in the folder; when the folder has
 * no node_modules at all but package.json declares the runner, npm's `.bin` link to it in the
 * dependency layer an install sandbox made (`env build`), said in a note; else why not.
 */
function runnerEntry(repo: RepoFiles, name: string, files: readonly string[]): Entry {
  const found = files.find((f) => repo.isFile(f));
  if (found) return { ok: true, entry: found, notes: [] };
  if (!repo.isDir("node_modules") && declares(repo, name)) {
    return {
      ok: true,
      entry: `node_modules/.bin/${name}`,
      notes: [
        `node_modules is not in the folder: ${name} comes from the dependency layer \`mini-agent-client env build\` makes; without one the tests cannot start`,
      ],
    };
  }
  return {
    ok: false,
    reason: `${name} is not installed in node_modules (there is no npm in the sandbox to install it; \`mini-agent-client env build --workspace DIR\` installs in an install sandbox)`,
  };
}

/**
 * A runner's own report options (`--reporter spec`, `--reporter=verbose`, `--json`) left out, each with
 * its value, and said in a note, as pytest's --junitxml and node's --test-reporter are: they choose how
 * results are printed, never which tests run, and the host names the one report it reads. A valued
 * option is read as `NAME VALUE`, `NAME=VALUE` or vitest's `NAME.KEY=VALUE`.
 */
function withoutReportOptions(args: string[], options: { bare?: string[]; valued: string[] }, why: string): { kept: string[]; notes: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (options.bare?.includes(a)) dropped.push(a);
    else if (options.valued.includes(a)) dropped.push(i + 1 < args.length ? `${a} ${args[++i]!}` : a);
    else if (options.valued.some((o) => a.startsWith(`${o}=`) || (o.startsWith("--") && a.startsWith(`${o}.`)))) dropped.push(a);
    else kept.push(a);
  }
  return { kept, notes: dropped.length === 0 ? [] : [`${dropped.join(" ")} replaced: ${why}`] };
}

function vitest(args: string[], repo: RepoFiles): Interpreted {
  const found = runnerEntry(repo, "vitest", ["node_modules/vitest/vitest.mjs"]);
  if (!found.ok) return fail(found.reason);
  const { entry, notes } = found;
  const own = withoutReportOptions(
    args[0] === "run" ? args.slice(1) : args,
    { valued: ["--reporter", "--outputFile"] },
    "the host reads a JUnit report at a path it names itself",
  );
  // vitest's typecheck gives tsc a build-info file inside its own dist/ folder, in node_modules, which enters
  // every sandbox read-only (a dependency layer): said now, not found as an unhandled error after the run
  const typecheck = own.kept.some((a) => a === "--typecheck" || a.startsWith("--typecheck=") || a.startsWith("--typecheck."));
  if (typecheck)
    notes.push(
      "--typecheck: vitest has tsc write its build info into node_modules/vitest/dist, and node_modules is read-only in the sandbox, so the run fails with EROFS after its tests; leave --typecheck out to run the tests",
    );
  // the default reporter beside the JUnit one: what vitest says outside its tests (an unhandled or typecheck
  // error that fails a run whose every test passed) is then in the output `status` points to
  return ok({
    command: ["node", entry, "run", "--reporter=default", "--reporter=junit", `--outputFile.junit=${JUNIT}`, ...own.kept],
    files: [],
    parser: "junit_xml",
    family: "node",
    notes: [...notes, ...own.notes],
  });
}

function jest(args: string[], repo: RepoFiles): Interpreted {
  const found = runnerEntry(repo, "jest", ["node_modules/jest/bin/jest.js"]);
  if (!found.ok) return fail(found.reason);
  const { entry, notes } = found;
  const own = withoutReportOptions(
    args,
    { bare: ["--json"], valued: ["--outputFile", "--reporters"] },
    "the host reads jest's --json report at a path it names itself",
  );
  // jest's own --json report (jest-junit is another package, and takes its path from the environment)
  return ok({
    command: ["node", entry, "--ci", "--json", `--outputFile=${DEFAULT_JEST_REPORT_PATH}`, ...own.kept],
    files: [],
    parser: "jest_json",
    family: "node",
    notes: [...notes, ...own.notes],
  });
}

/**
 * mocha with its built-in xunit reporter writing a JUnit file the host reads (no package beyond
 * mocha itself). mocha 8 and later ship `bin/mocha.js`, older ones `bin/mocha`; `--reporter-options`
 * (plural) is the spelling every version from 3 on reads.
 */
function mocha(args: string[], repo: RepoFiles): Interpreted {
  const found = runnerEntry(repo, "mocha", ["node_modules/mocha/bin/mocha.js", "node_modules/mocha/bin/mocha"]);
  if (!found.ok) return fail(found.reason);
  const { entry, notes } = found;
  const own = withoutReportOptions(
    args,
    { valued: ["--reporter", "-R", "--reporter-option", "--reporter-options", "-O"] },
    "the host reads a JUnit report from mocha's xunit reporter, at a path it names itself",
  );
  return ok({
    command: ["node", entry, "--reporter", "xunit", "--reporter-options", `output=${JUNIT}`, ...own.kept],
    files: [],
    parser: "junit_xml",
    family: "node",
    notes: [...notes, ...own.notes],
  });
}

/** A known runner as the first word(s) of `words`, or null when the program is not one we read a report from. */
export function recognise(words: Word[], repo: RepoFiles): Interpreted | null {
  const t = words.map((w) => w.text);
  const [p, a1, a2] = t;
  if (p === "pytest" || p === "py.test") return ok(pytest(t.slice(1)));
  if ((p === "python" || p === "python3") && a1 === "-m" && a2 === "pytest") return ok(pytest(t.slice(3)));
  if (p === "go" && a1 === "test") return ok(goTest(t.slice(2)));
  if (p === "node") {
    const at = t.indexOf("--test");
    const pre = t.slice(1, at);
    if (at > 0 && pre.every((x) => x.startsWith("-"))) return ok(nodeTest(pre, words.slice(at + 1), repo));
  }
  if (p === "vitest") return vitest(t.slice(1), repo);
  if (p === "jest") return jest(t.slice(1), repo);
  if (p === "mocha") return mocha(t.slice(1), repo);
  return null;
}

const FAMILY_BY_PROGRAM: Record<string, ImageFamily> = { python3: "python", python: "python", pytest: "python", go: "go", node: "node" };

/** the family whose image has this program, or null when the program does not tell */
export function familyOfProgram(program: string): ImageFamily | null {
  return Object.hasOwn(FAMILY_BY_PROGRAM, program) ? FAMILY_BY_PROGRAM[program]! : null;
}

/** `--test "CMD ARG..."` (already split): a recognised runner, else exit-code-only. */
export function interpretTestCommand(words: Word[], repo: RepoFiles): Interpreted {
  const bad = checkProgram(words[0]);
  if (bad) return fail(bad);
  const known = recognise(words, repo);
  if (known) return known;
  const t = words.map((w) => w.text);
  const glob = words.find((w) => w.glob);
  if (glob) return fail(`${glob.text} is a glob a shell would expand; quote it to pass it literally`);
  // the images have python3, not python
  const command = t[0] === "python" ? ["python3", ...t.slice(1)] : t;
  return ok({
    command,
    files: [],
    parser: "exit_code",
    family: familyOfProgram(command[0]!),
    notes: [`${command[0]} is not a runner whose report the host reads: exit code only, no test count (weaker)`],
  });
}

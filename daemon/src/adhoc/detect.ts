import { splitWords } from "./argv.js";
import { explainScriptChain } from "./npm-scripts.js";
import type { RepoFiles } from "./repo-files.js";
import { familyOfProgram, PYTEST_KEEP_GOING, PYTEST_REPORT_ARGS, recognise, type DraftedTest } from "./test-command.js";

/**
 * The test command when `--test` is absent, in the order: package.json
 * `scripts.test`, Python markers, go.mod, a Makefile `test:` target. Only
 * READS files. A rule that finds its marker but cannot turn it into a plain
 * argv refuses (with why) instead of falling through to a guess.
 */
export type Detected =
  | { ok: true; test: DraftedTest; source: string }
  | { ok: false; reason: string /** the --test to give instead, when one is known */; suggest?: string };

/** npm init's placeholder: the project has no test script at all */
const NPM_PLACEHOLDER = /^echo "Error: no test specified" && exit 1$/;

function fromPackageJson(repo: RepoFiles): Detected | null {
  const text = repo.readText("package.json");
  if (text === null) return null;
  let scripts: Record<string, unknown>;
  try {
    const parsed = (JSON.parse(text) as { scripts?: unknown })?.scripts;
    scripts = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return { ok: false, reason: "package.json is not valid JSON" };
  }
  const script = scripts.test;
  if (typeof script !== "string" || script.trim() === "" || NPM_PLACEHOLDER.test(script.trim())) return null;
  const why = (r: string): Detected => ({ ok: false, reason: `package.json scripts.test (${script}) cannot run without npm and a shell: ${r}` });
  // `npm run test:unit && ...`: say what each step runs, and the --test that would run the tests, rather than "cannot run" alone
  const chain = explainScriptChain(script, scripts, repo);
  if (chain !== null) return { ...why(`it runs ${chain.runs}`), ...(chain.suggest !== null && { suggest: chain.suggest }) };
  const split = splitWords(script);
  if (!split.ok) return why(`it uses ${split.reason}`);
  const known = split.words.length > 0 ? recognise(split.words, repo) : null;
  if (known === null) return why(`${split.words[0]?.text ?? "it"} is not a test runner mini-agent can translate (node --test, vitest, jest, mocha)`);
  if (!known.ok) return why(known.reason);
  return { ok: true, test: known.test, source: "package.json scripts.test" };
}

const PYTHON_MARKERS = ["pyproject.toml", "pytest.ini", "setup.cfg"];

/** pytest's own config sections, by file: where a project would set `pythonpath` itself */
const PYTEST_SECTIONS: Array<[string, string]> = [
  ["pyproject.toml", "[tool.pytest.ini_options]"],
  ["pytest.ini", "[pytest]"],
  ["tox.ini", "[pytest]"],
  ["setup.cfg", "[tool:pytest]"],
];

/** The `[section]`'s lines of an ini/TOML text, up to the next header. */
function sectionLines(text: string, header: string): string[] {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => l.trim() === header);
  if (at < 0) return [];
  const end = lines.findIndex((l, i) => i > at && /^\s*\[/.test(l));
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

function configuresPythonpath(repo: RepoFiles): boolean {
  return PYTEST_SECTIONS.some(([file, header]) => sectionLines(repo.readText(file) ?? "", header).some((l) => /^\s*pythonpath\s*=/.test(l)));
}

/**
 * A src layout (`src/<package>/__init__.py` or `src/<module>.py`): its tests import the package as
 * installed, and nothing is installed in the sandbox, so pytest gets src/ on its path, as pytest's
 * own `pythonpath` setting would put it. A project that sets `pythonpath` itself is left as it is.
 */
function srcLayout(repo: RepoFiles): boolean {
  if (!repo.isDir("src") || configuresPythonpath(repo)) return false;
  return repo.listFiles("src", 2000).some((f) => /^src\/[^/]+\/__init__\.py$/.test(f) || /^src\/[^/]+\.py$/.test(f));
}

function fromPython(repo: RepoFiles): Detected | null {
  const marker = PYTHON_MARKERS.find((m) => repo.isFile(m));
  const testFile = marker ? undefined : repo.listFiles("tests", 2000).find((f) => /(^|\/)test_[^/]*\.py$/.test(f));
  if (!marker && !testFile) return null;
  const src = srcLayout(repo);
  const command = [
    "python3",
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    PYTEST_KEEP_GOING,
    ...(src ? ["-o", "pythonpath=src"] : []),
    ...PYTEST_REPORT_ARGS,
  ];
  const notes = src ? ["src layout: -o pythonpath=src, since the package is not installed in the sandbox"] : [];
  return { ok: true, test: { command, files: [], parser: "junit_xml", family: "python", notes }, source: marker ?? testFile! };
}

function fromGoMod(repo: RepoFiles): Detected | null {
  if (!repo.isFile("go.mod")) return null;
  return { ok: true, test: { command: ["go", "test", "-json", "./..."], files: [], parser: "go_test_json", family: "go", notes: [] }, source: "go.mod" };
}

/** The recipe of a `test:` rule: its tab-indented lines up to the next non-recipe line. */
function makeRecipe(text: string): string[] | null {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /^test\s*:(?!=)/.test(l));
  if (at < 0) return null;
  const recipe: string[] = [];
  const inline = lines[at]!.split(";").slice(1).join(";").trim();
  if (inline) recipe.push(inline);
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("\t")) break;
    if (l.trim() !== "") recipe.push(l.trim());
  }
  return recipe;
}

function fromMakefile(repo: RepoFiles): Detected | null {
  const name = ["GNUmakefile", "makefile", "Makefile"].find((m) => repo.isFile(m));
  const text = name ? repo.readText(name) : null;
  const recipe = text === null ? null : makeRecipe(text);
  if (recipe === null) return null;
  const why = (r: string): Detected => ({ ok: false, reason: `${name} test: ${r} (there is no make in the sandbox)` });
  if (recipe.length !== 1) return why(`the recipe has ${recipe.length} lines; only a single plain command can run without make`);
  const line = recipe[0]!.replace(/^[@+-]+/, "");
  if (line.includes("$")) return why(`the recipe uses make variables (${line})`);
  if (line.endsWith("\\")) return why("the recipe continues over several lines");
  const split = splitWords(line);
  if (!split.ok) return why(`the recipe uses ${split.reason}`);
  const first = split.words[0]?.text;
  if (!first || first === "make" || split.words.some((w) => w.glob)) return why(`the recipe (${line}) is not a single plain command`);
  // exit code only: a recipe is whatever the project wrote, not a runner whose report we know
  const test: DraftedTest = {
    command: split.words.map((w) => w.text),
    files: [],
    parser: "exit_code",
    family: familyOfProgram(first),
    notes: [`${name} test: exit code only, no test count (weaker)`],
  };
  return { ok: true, test, source: `${name} test:` };
}

export function detectTestCommand(repo: RepoFiles): Detected {
  for (const rule of [fromPackageJson, fromPython, fromGoMod, fromMakefile]) {
    const found = rule(repo);
    if (found) return found;
  }
  return {
    ok: false,
    reason: "no test command found (no package.json scripts.test, pyproject.toml/pytest.ini/setup.cfg, tests/**/test_*.py, go.mod or Makefile test: target)",
  };
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { splitWords } from "./argv.js";
import { detectTestCommand } from "./detect.js";
import { repoFiles } from "./repo-files.js";
import { interpretTestCommand } from "./test-command.js";

const JUNIT = "--junitxml=/tmp/mini-agent-junit.xml";
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** a real folder with these files (content: string, or an object written as JSON) */
function repo(files: Record<string, string | object>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "adhoc-detect-"));
  dirs.push(root);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), typeof content === "string" ? content : JSON.stringify(content));
  }
  return root;
}
const detect = (files: Record<string, string | object>) => detectTestCommand(repoFiles(repo(files)));
const pkg = (test: string) => ({ "package.json": { name: "x", scripts: { test } } });

describe("detectTestCommand: the issue's order, with the parser that fits", () => {
  it("package.json `node --test DIR`: TAP reporter, the folder named by a files glob (Node 20 would skip tests/test_x.js)", () => {
    const d = detect({ ...pkg("node --test tests/"), "tests/test_x.js": "" });
    expect(d).toMatchObject({ ok: true, source: "package.json scripts.test" });
    if (!d.ok) return;
    expect(d.test).toMatchObject({
      command: ["node", "--test", "--test-reporter=tap"],
      files: ["tests/**/*.{js,mjs,cjs}"],
      parser: "node_test",
      family: "node",
    });
  });

  it("package.json `node --test` with files and a glob keeps the files and names the glob", () => {
    const d = detect({ ...pkg("node --test --test-reporter=spec test/a.test.js test/*.spec.js"), "test/a.test.js": "" });
    expect(d.ok && d.test).toMatchObject({ command: ["node", "--test", "--test-reporter=tap", "test/a.test.js"], files: ["test/*.spec.js"] });
  });

  it("package.json vitest with vitest installed: node + vitest.mjs run, JUnit report at the fixed path", () => {
    const d = detect({ ...pkg("vitest run"), "node_modules/vitest/vitest.mjs": "" });
    expect(d.ok && d.test).toMatchObject({
      command: ["node", "node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=junit", "--outputFile.junit=/tmp/mini-agent-junit.xml"],
      parser: "junit_xml",
    });
  });

  it("vitest --typecheck is said up front: vitest has tsc write into node_modules/vitest/dist, which is read-only in the sandbox (unjs/ufo failed after all its tests with EROFS)", () => {
    for (const script of ["vitest run --typecheck", "vitest --typecheck.enabled", "vitest run --typecheck=true"]) {
      const d = detect({ ...pkg(script), "node_modules/vitest/vitest.mjs": "" });
      expect(d.ok && d.test.notes, script).toContainEqual(
        expect.stringMatching(/^--typecheck: vitest has tsc write its build info into node_modules\/vitest\/dist/),
      );
    }
    const plain = detect({ ...pkg("vitest run"), "node_modules/vitest/vitest.mjs": "" });
    expect(plain.ok && plain.test.notes).toEqual([]);
  });

  it("package.json vitest without node_modules, jest without jest: refused (there is no npm to install them)", () => {
    expect(detect(pkg("vitest"))).toMatchObject({ ok: false, reason: expect.stringMatching(/vitest is not installed/) });
    expect(detect(pkg("jest"))).toMatchObject({ ok: false, reason: expect.stringMatching(/jest is not installed/) });
  });

  it("package.json mocha with mocha installed: mocha's built-in xunit reporter writes the JUnit file the host reads (it was refused as a runner mini-agent cannot translate)", () => {
    for (const entry of ["node_modules/mocha/bin/mocha.js", "node_modules/mocha/bin/mocha"]) {
      const d = detect({ ...pkg("mocha --recursive test/"), [entry]: "" });
      expect(d, entry).toMatchObject({
        ok: true,
        test: {
          command: ["node", entry, "--reporter", "xunit", "--reporter-options", `output=${JUNIT.slice("--junitxml=".length)}`, "--recursive", "test/"],
          parser: "junit_xml",
          family: "node",
        },
      });
    }
    expect(detect(pkg("mocha"))).toMatchObject({ ok: false, reason: expect.stringMatching(/mocha is not installed/) });
  });

  it("regression: a runner script that picks its own reporter (`mocha --reporter spec test/test.js`, found on a public repository) was refused; the reporter is replaced by the host's, each option with its value, said in a note", () => {
    const mochaEntry = "node_modules/mocha/bin/mocha.js";
    const out = `output=${JUNIT.slice("--junitxml=".length)}`;
    for (const [script, kept, dropped] of [
      ["mocha --reporter spec test/test.js", ["test/test.js"], "--reporter spec"],
      ["mocha -R dot --recursive test", ["--recursive", "test"], "-R dot"],
      ["mocha --reporter=spec --reporter-options maxDiffSize=0 test", ["test"], "--reporter=spec --reporter-options maxDiffSize=0"],
      ["mocha test --reporter", ["test"], "--reporter"],
    ] as const) {
      const d = detect({ ...pkg(script), [mochaEntry]: "" });
      expect(d.ok && d.test.command, script).toEqual(["node", mochaEntry, "--reporter", "xunit", "--reporter-options", out, ...kept]);
      expect(d.ok && d.test.notes, script).toEqual([
        `${dropped} replaced: the host reads a JUnit report from mocha's xunit reporter, at a path it names itself`,
      ]);
    }
    const v = detect({ ...pkg("vitest run --reporter=verbose --outputFile.json=r.json src"), "node_modules/vitest/vitest.mjs": "" });
    expect(v.ok && v.test.command).toEqual([
      "node",
      "node_modules/vitest/vitest.mjs",
      "run",
      "--reporter=default",
      "--reporter=junit",
      "--outputFile.junit=/tmp/mini-agent-junit.xml",
      "src",
    ]);
    expect(v.ok && v.test.notes).toEqual(["--reporter=verbose --outputFile.json=r.json replaced: the host reads a JUnit report at a path it names itself"]);
    const j = detect({ ...pkg("jest --json --outputFile out.json --reporters default --silent"), "node_modules/jest/bin/jest.js": "" });
    expect(j.ok && j.test.command).toEqual(["node", "node_modules/jest/bin/jest.js", "--ci", "--json", "--outputFile=/tmp/mini-agent-jest.json", "--silent"]);
    expect(j.ok && j.test.notes).toEqual([
      "--json --outputFile out.json --reporters default replaced: the host reads jest's --json report at a path it names itself",
    ]);
    // an option that only starts like one is the project's own and kept
    const k = detect({ ...pkg("mocha --reporterx test"), [mochaEntry]: "" });
    expect(k.ok && k.test.command.slice(-2)).toEqual(["--reporterx", "test"]);
  });

  it("regression: after `env build` (node_modules only in the dependency layer) a declared runner was refused as not installed; it runs through npm's .bin link, with a note", () => {
    const declared = (test: string, dep: string) => ({ "package.json": { name: "x", scripts: { test }, devDependencies: { [dep]: "*" } } });
    for (const [runner, first] of [
      ["mocha", "--reporter"],
      ["jest", "--ci"],
      ["vitest", "run"],
    ] as const) {
      const d = detect(declared(runner, runner));
      expect(d, runner).toMatchObject({ ok: true, test: { notes: [expect.stringMatching(/env build/)] } });
      expect(d.ok && d.test.command.slice(0, 3), runner).toEqual(["node", `node_modules/.bin/${runner}`, first]);
    }
    // not declared, or a node_modules folder that lacks it: refused, pointing at env build
    expect(detect(pkg("mocha"))).toMatchObject({ ok: false, reason: expect.stringMatching(/mocha is not installed.*env build/) });
    expect(detect({ ...declared("mocha", "mocha"), "node_modules/other/index.js": "" })).toMatchObject({ ok: false });
  });

  it("package.json jest with jest installed: jest's own --json report file, read by jest_json (was exit code only)", () => {
    const d = detect({ ...pkg("jest --silent"), "node_modules/jest/bin/jest.js": "" });
    expect(d.ok && d.test).toMatchObject({
      command: ["node", "node_modules/jest/bin/jest.js", "--ci", "--json", "--outputFile=/tmp/mini-agent-jest.json", "--silent"],
      parser: "jest_json",
      notes: [],
    });
  });

  it("package.json scripts with shell syntax or an unknown program are refused, not guessed", () => {
    for (const script of ["npm run build && node --test", "NODE_ENV=test node --test", "mocha", "tsc && vitest", "node --test | tap-spec"]) {
      const d = detect({ ...pkg(script), "pyproject.toml": "" });
      expect(d, script).toMatchObject({ ok: false, reason: expect.stringMatching(/^package\.json scripts\.test/) });
    }
  });

  it("regression: a test script `npm run test:unit && npm run lint` was refused without saying what test:unit runs; the refusal names each script, what it runs, and the --test to give", () => {
    const scripts = { test: "npm run test:unit && npm run lint", "test:unit": "node --test tests/", lint: "biome ci ." };
    const d = detect({ "package.json": { name: "x", scripts }, "tests/test_x.js": "" });
    expect(d).toEqual({
      ok: false,
      reason:
        'package.json scripts.test (npm run test:unit && npm run lint) cannot run without npm and a shell: it runs npm run test:unit (scripts["test:unit"] is "node --test tests/"), then npm run lint (scripts.lint is "biome ci .")',
      suggest: "node --test tests/",
    });
  });

  it("regression: an `npm run X` indirection is followed through the scripts it names (a loop or a missing script stops it) to suggest a runner", () => {
    const via = (scripts: Record<string, string>, extra: Record<string, string> = {}) => detect({ "package.json": { name: "x", scripts }, ...extra });
    expect(
      via({ test: "npm run unit", unit: "npm run build && vitest run --project unit", build: "tsc" }, { "node_modules/vitest/vitest.mjs": "" }),
    ).toMatchObject({
      ok: false,
      reason: expect.stringContaining('it runs npm run unit (scripts.unit is "npm run build && vitest run --project unit")'),
      suggest: "vitest run --project unit",
    });
    // no runner anywhere in the chain: the steps are still named, no suggestion is made up
    const none = via({ test: "yarn check && npm run missing", check: "npm test" });
    expect(none).toMatchObject({ ok: false, reason: expect.stringContaining("then npm run missing (package.json has no scripts.missing)") });
    expect(none).not.toHaveProperty("suggest");
    // a plain chain without npm: what it runs, and its runner
    expect(via({ test: "tsc && node --test" })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("it runs tsc, then node --test"),
      suggest: "node --test",
    });
  });

  it("npm's placeholder test script is no test script: detection goes on to the next rule", () => {
    const d = detect({ ...pkg('echo "Error: no test specified" && exit 1'), "pyproject.toml": "" });
    expect(d).toMatchObject({ ok: true, source: "pyproject.toml" });
  });

  it("Python markers (pyproject.toml, pytest.ini, setup.cfg, tests/**/test_*.py): python3 -m pytest with a JUnit report", () => {
    const expected = {
      command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", "-o", "junit_family=xunit1", JUNIT],
      parser: "junit_xml",
      family: "python",
    };
    for (const marker of ["pyproject.toml", "pytest.ini", "setup.cfg", "tests/unit/test_math.py"]) {
      const d = detect({ [marker]: "" });
      expect(d, marker).toMatchObject({ ok: true, source: marker, test: expected });
    }
    expect(detect({ "tests/helper.py": "" })).toMatchObject({ ok: false });
  });

  it("regression: a src-layout package (src/pkg/__init__.py) failed every test module with ModuleNotFoundError; pytest now gets -o pythonpath=src", () => {
    const PYTEST = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors"];
    const REPORT = ["-o", "junit_family=xunit1", JUNIT];
    for (const layout of [{ "src/cachepkg/__init__.py": "" }, { "src/single.py": "" }] as Array<Record<string, string>>) {
      const d = detect({ "pyproject.toml": "[project]\nname = 'x'\n", ...layout, "tests/test_a.py": "" });
      expect(d).toMatchObject({ ok: true, test: { command: [...PYTEST, "-o", "pythonpath=src", ...REPORT], notes: [expect.stringMatching(/src layout/)] } });
    }
    // the project's own pythonpath (any of pytest's config files) is left to pytest
    for (const [file, text] of [
      ["pyproject.toml", "[tool.pytest.ini_options]\npythonpath = ['src']\n"],
      ["pytest.ini", "[pytest]\npythonpath = src\n"],
      ["setup.cfg", "[metadata]\nname = x\n[tool:pytest]\npythonpath = src\n"],
      ["tox.ini", "[pytest]\npythonpath = src\n"],
    ]) {
      const d = detect({ "pyproject.toml": "", [file!]: text!, "src/pkg/__init__.py": "" });
      expect(d, file).toMatchObject({ ok: true, test: { command: [...PYTEST, ...REPORT], notes: [] } });
    }
    // a pythonpath key of another section does not count, and a src/ folder without Python in it changes nothing
    expect(detect({ "pyproject.toml": "[tool.other]\npythonpath = 'x'\n", "src/pkg/__init__.py": "" })).toMatchObject({
      test: { command: [...PYTEST, "-o", "pythonpath=src", ...REPORT] },
    });
    expect(detect({ "pyproject.toml": "", "src/readme.txt": "" })).toMatchObject({ test: { command: [...PYTEST, ...REPORT] } });
  });

  it("go.mod: go test -json ./..., go_test_json", () => {
    expect(detect({ "go.mod": "module x\n" })).toMatchObject({
      ok: true,
      test: { command: ["go", "test", "-json", "./..."], parser: "go_test_json", family: "go" },
    });
  });

  it("package.json comes before Python, Python before go.mod, go.mod before a Makefile", () => {
    expect(detect({ ...pkg("node --test"), "pyproject.toml": "", "go.mod": "" })).toMatchObject({ source: "package.json scripts.test" });
    expect(detect({ "setup.cfg": "", "go.mod": "", Makefile: "test:\n\tpytest\n" })).toMatchObject({ source: "setup.cfg" });
    expect(detect({ "go.mod": "", Makefile: "test:\n\tgo test ./...\n" })).toMatchObject({ source: "go.mod" });
  });

  it("a Makefile test: recipe that is one plain command runs as an argv, exit code only", () => {
    const d = detect({ Makefile: "all: build\n\ntest:\n\t@python3 run_tests.py --quick\n\nbuild:\n\tcc x.c\n" });
    expect(d).toMatchObject({
      ok: true,
      source: "Makefile test:",
      test: { command: ["python3", "run_tests.py", "--quick"], parser: "exit_code", family: "python" },
    });
  });

  it("a Makefile test: recipe with make variables, shell syntax or several lines is refused with why", () => {
    expect(detect({ Makefile: "test:\n\t$(PYTHON) -m pytest\n" })).toMatchObject({ ok: false, reason: expect.stringMatching(/make variables/) });
    expect(detect({ Makefile: "test:\n\tcd src && go test\n" })).toMatchObject({ ok: false, reason: expect.stringMatching(/shell operator/) });
    expect(detect({ Makefile: "test:\n\tgo vet ./...\n\tgo test ./...\n" })).toMatchObject({ ok: false, reason: expect.stringMatching(/2 lines/) });
    expect(detect({ Makefile: "test: build\n\tmake -C sub test\n" })).toMatchObject({ ok: false, reason: expect.stringMatching(/not a single plain command/) });
  });

  it("nothing found: refused", () => {
    expect(detect({ "README.md": "hi", Makefile: "build:\n\tcc x.c\n" })).toMatchObject({ ok: false, reason: expect.stringMatching(/no test command found/) });
  });

  it("a package.json that is a symlink is not read (detection never follows links out of the folder)", () => {
    const root = repo({ "pyproject.toml": "" });
    const outside = repo(pkg("node --test"));
    fs.symlinkSync(path.join(outside, "package.json"), path.join(root, "package.json"));
    expect(detectTestCommand(repoFiles(root))).toMatchObject({ ok: true, source: "pyproject.toml" });
  });
});

describe("interpretTestCommand: --test picks the parser from the command", () => {
  const interpret = (cmd: string, files: Record<string, string> = {}) => {
    const s = splitWords(cmd);
    if (!s.ok) throw new Error(s.reason);
    return interpretTestCommand(s.words, repoFiles(repo(files)));
  };

  it("pytest: python3 -m pytest with the JUnit report and no cache in the workspace; a given --junitxml is replaced", () => {
    expect(interpret("pytest -x tests")).toMatchObject({
      ok: true,
      test: {
        command: ["python3", "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors", "-x", "tests", "-o", "junit_family=xunit1", JUNIT],
        parser: "junit_xml",
        family: "python",
      },
    });
    const r = interpret("python -m pytest --junitxml=out.xml");
    expect(r).toMatchObject({
      ok: true,
      test: { command: ["python3", "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors", "-o", "junit_family=xunit1", JUNIT] },
    });
    expect(r.ok && r.test.notes.join(" ")).toMatch(/--junitxml=out.xml replaced/);
    // every test is named by its file (pytest node ids): a given junit_family is replaced, its `-o` with it
    const f = interpret("pytest -o junit_family=xunit2 tests");
    expect(f).toMatchObject({
      ok: true,
      test: { command: ["python3", "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors", "tests", "-o", "junit_family=xunit1", JUNIT] },
    });
    expect(f.ok && f.test.notes.join(" ")).toMatch(/junit_family=xunit2 replaced/);
  });

  it("regression: one test file that could not load stopped pytest's whole session, so no test ran; every pytest command now keeps going past it, said once", () => {
    const r = interpret("pytest tests");
    expect(r.ok && r.test.command).toContain("--continue-on-collection-errors");
    expect(r.ok && r.test.notes).toContainEqual(
      expect.stringMatching(/^--continue-on-collection-errors added: a test file that cannot load is reported and the others still run$/),
    );
    // given already: kept once, nothing said
    const given = interpret("pytest --continue-on-collection-errors tests");
    expect(given.ok && given.test.command.filter((a) => a === "--continue-on-collection-errors")).toHaveLength(1);
    expect(given.ok && given.test.notes).toEqual([]);
  });

  it("go test gets -json once; node --test gets the TAP reporter", () => {
    expect(interpret("go test ./pkg/...")).toMatchObject({
      ok: true,
      test: { command: ["go", "test", "-json", "./pkg/..."], parser: "go_test_json", family: "go" },
    });
    expect(interpret("go test -json ./...")).toMatchObject({ ok: true, test: { command: ["go", "test", "-json", "./..."] } });
    expect(interpret("node --test tests/a.js")).toMatchObject({
      ok: true,
      test: { command: ["node", "--test", "--test-reporter=tap", "tests/a.js"], parser: "node_test" },
    });
  });

  it("anything else is exit code only, says so, and takes the family from the program", () => {
    const r = interpret("python3 run_tests.py");
    expect(r).toMatchObject({ ok: true, test: { command: ["python3", "run_tests.py"], parser: "exit_code", family: "python" } });
    expect(r.ok && r.test.notes.join(" ")).toMatch(/exit code only, no test count/);
    expect(interpret("./check --all")).toMatchObject({ ok: true, test: { parser: "exit_code", family: null } });
  });

  it("refuses a command that names no program: empty, an option first, a path outside the workspace, npm/make/sh, a glob", () => {
    expect(interpret("")).toMatchObject({ ok: false, reason: "it names no program" });
    expect(interpret("''")).toMatchObject({ ok: false, reason: "it names no program" });
    expect(interpret("--verbose pytest")).toMatchObject({ ok: false, reason: expect.stringMatching(/starts with an option/) });
    expect(interpret("/usr/bin/python3 -m pytest")).toMatchObject({ ok: false, reason: expect.stringMatching(/absolute path outside the workspace/) });
    expect(interpret("../other/run.sh")).toMatchObject({ ok: false, reason: expect.stringMatching(/outside the workspace/) });
    expect(interpret("npm test")).toMatchObject({ ok: false, reason: expect.stringMatching(/no npm in the sandbox/) });
    expect(interpret("make test")).toMatchObject({ ok: false, reason: expect.stringMatching(/no make/) });
    expect(interpret("bash -c 'pytest'")).toMatchObject({ ok: false, reason: expect.stringMatching(/no shell/) });
    expect(interpret("python3 tests/*.py")).toMatchObject({ ok: false, reason: expect.stringMatching(/glob a shell would expand/) });
  });
});

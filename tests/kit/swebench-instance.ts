import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * A SWE-bench instance of our own, in SWE-bench's published JSON Lines shape,
 * over a small Python repository made with real git (the test's own data, so
 * running git on it is safe; the importer itself never runs git):
 *   calc.divide uses floor division (the bug);
 *   test_patch adds tests/test_calc.py::test_divide_exact, failing at the base;
 *   the gold patch makes divide exact;
 *   tests/test_calc.py::test_add passes before and after (PASS_TO_PASS).
 */
export const F2P = "tests/test_calc.py::test_divide_exact";
export const P2P = "tests/test_calc.py::test_add";
export const INSTANCE_ID = "acme__calc-1";

const BASE_CALC = "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a // b\n";
const FIXED_CALC = BASE_CALC.replace("a // b", "a / b");
const BASE_TEST = "from calc import add, divide\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
const NEW_TEST = `${BASE_TEST}\n\ndef test_divide_exact():\n    assert divide(7, 2) == 3.5\n`;

function git(cwd: string, ...args: string[]): string {
  // no user or system config: the test's git behaves the same on every machine
  const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd, env, encoding: "utf8" });
}

export interface SweBenchFixture {
  reposDir: string;
  repoDir: string;
  baseCommit: string;
  /** one instance as a JSONL object (lists JSON-encoded as strings, as the published files have them) */
  line: Record<string, unknown>;
}

export function makeSweBenchFixture(root: string): SweBenchFixture {
  const reposDir = path.join(root, "repos");
  const repoDir = path.join(reposDir, "acme__calc");
  fs.mkdirSync(path.join(repoDir, "tests"), { recursive: true });
  fs.writeFileSync(path.join(repoDir, "calc.py"), BASE_CALC);
  fs.writeFileSync(path.join(repoDir, "tests", "test_calc.py"), BASE_TEST);
  fs.writeFileSync(path.join(repoDir, "conftest.py"), "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n");
  git(repoDir, "init", "-q", "-b", "main");
  git(repoDir, "add", "-A");
  git(repoDir, "commit", "-q", "-m", "base");
  const baseCommit = git(repoDir, "rev-parse", "HEAD").trim();
  fs.writeFileSync(path.join(repoDir, "tests", "test_calc.py"), NEW_TEST);
  const testPatch = git(repoDir, "diff");
  git(repoDir, "checkout", "-q", "--", ".");
  fs.writeFileSync(path.join(repoDir, "calc.py"), FIXED_CALC);
  const patch = git(repoDir, "diff");
  git(repoDir, "checkout", "-q", "--", ".");
  // a later commit, so the base is not simply HEAD
  fs.writeFileSync(path.join(repoDir, "README.md"), "calc\n");
  git(repoDir, "add", "-A");
  git(repoDir, "commit", "-q", "-m", "later");
  return {
    reposDir,
    repoDir,
    baseCommit,
    line: {
      instance_id: INSTANCE_ID,
      repo: "acme/calc",
      base_commit: baseCommit,
      patch,
      test_patch: testPatch,
      problem_statement: "divide(7, 2) returns 3 instead of 3.5.",
      FAIL_TO_PASS: JSON.stringify([F2P]),
      PASS_TO_PASS: JSON.stringify([P2P]),
      hints_text: "",
      version: "1.0",
    },
  };
}

export function writeJsonl(file: string, lines: (Record<string, unknown> | string)[]): string {
  fs.writeFileSync(file, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return file;
}

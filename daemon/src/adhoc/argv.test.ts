import { describe, expect, it } from "vitest";
import { splitWords } from "./argv.js";

const words = (s: string) => {
  const r = splitWords(s);
  if (!r.ok) throw new Error(r.reason);
  return r.words.map((w) => w.text);
};
const refused = (s: string) => {
  const r = splitWords(s);
  return r.ok ? null : r.reason;
};

describe("splitWords: --test split like shell words, never through a shell", () => {
  it("splits on blanks and keeps quoted blanks, backslash escapes and empty quoted words", () => {
    expect(words("  pytest  -k 'a and b'  tests/x.py ")).toEqual(["pytest", "-k", "a and b", "tests/x.py"]);
    expect(words('node --test "my tests/a.js"')).toEqual(["node", "--test", "my tests/a.js"]);
    expect(words("go test -run Foo\\ Bar ./...")).toEqual(["go", "test", "-run", "Foo Bar", "./..."]);
    expect(words(`echo '' "a\\"b"`)).toEqual(["echo", "", 'a"b']);
    expect(words("")).toEqual([]);
  });

  it("quoted shell characters are literal, unquoted ones are refused", () => {
    expect(words("pytest -k 'a|b' \"x;y\"")).toEqual(["pytest", "-k", "a|b", "x;y"]);
    for (const s of [
      "pytest && echo hi",
      "go test ./... | tee log",
      "pytest > out.txt",
      "pytest; rm -rf /",
      "pytest $ARGS",
      "pytest `id`",
      "(pytest)",
      "pytest &",
    ]) {
      expect(refused(s), s).toMatch(/shell operator or expansion/);
    }
  });

  it("refuses expansions inside double quotes, env assignments, comments, ~ and broken quoting", () => {
    expect(refused('pytest "$HOME"')).toMatch(/expansion/);
    expect(refused("CI=1 pytest")).toMatch(/environment assignment \(CI=/);
    expect(refused("pytest # all")).toMatch(/comment/);
    expect(refused("~/bin/test")).toMatch(/~/);
    expect(refused("pytest 'unterminated")).toMatch(/unterminated '/);
    expect(refused('pytest "unterminated')).toMatch(/unterminated "/);
    expect(refused("pytest \\")).toMatch(/trailing backslash/);
  });

  it("marks unquoted glob characters, not quoted ones", () => {
    const r = splitWords("node --test tests/*.js 'lit*.js'");
    expect(r.ok && r.words.map((w) => w.glob)).toEqual([false, false, true, false]);
  });
});

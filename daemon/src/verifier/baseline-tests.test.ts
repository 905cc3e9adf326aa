import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codeFingerprintAt, recordCodeFingerprint } from "./baseline-tests.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-fingerprint-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(root, "t-"));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return path.join(dir, "verifier/baseline-tests.js");
}

const BASE = {
  "verifier/baseline-tests.js": "record",
  "tools/run-tests.js": "summarize",
  "tools/parsers/junit-xml.js": "parse v1",
  "tools/parsers/junit-xml.test.js": "a test",
  "tools/parsers/samples/x.xml": "<x/>",
};

describe("baseline records are keyed by the code that made them", () => {
  it("regression: a record made by other parsing code was reused (a JUnit report the old parser refused stayed refused after the fix)", () => {
    const before = codeFingerprintAt(tree(BASE));
    expect(codeFingerprintAt(tree(BASE))).toBe(before);
    expect(codeFingerprintAt(tree({ ...BASE, "tools/parsers/junit-xml.js": "parse v2" }))).not.toBe(before);
    expect(codeFingerprintAt(tree({ ...BASE, "tools/run-tests.js": "summarize v2" }))).not.toBe(before);
    expect(codeFingerprintAt(tree({ ...BASE, "verifier/baseline-tests.js": "record v2" }))).not.toBe(before);
    // tests and report samples beside the parsers do not decide a record
    expect(codeFingerprintAt(tree({ ...BASE, "tools/parsers/junit-xml.test.js": "another test", "tools/parsers/samples/x.xml": "<y/>" }))).toBe(before);
  });

  it("this process's fingerprint covers the real parsers", () => {
    expect(recordCodeFingerprint()).toMatch(/^[0-9a-f]{64}$/);
    expect(recordCodeFingerprint()).not.toBe(codeFingerprintAt(path.join(root, "nowhere/verifier/baseline-tests.js")));
  });
});

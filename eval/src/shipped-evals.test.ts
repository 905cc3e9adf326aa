import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadSuite } from "./case-load.js";

const EVALS = path.resolve(__dirname, "../../evals");

describe("the shipped evals/ suite", () => {
  it("loads: every case is valid, its replay fits its repo/, and it has an expected verdict and a description", async () => {
    const suite = await loadSuite([EVALS]);
    const folders = fs
      .readdirSync(EVALS, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(suite.cases.map((c) => c.id)).toEqual(folders);
    expect(suite.cases.length).toBeGreaterThanOrEqual(10);
    for (const c of suite.cases) {
      expect(c.expect.description, c.id).toMatch(/\S/);
      expect(c.expect.description!.includes("\n"), c.id).toBe(false);
    }
    expect(suite.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("covers the fixtures and their failure modes (a dropped case is noticed)", async () => {
    const ids = (await loadSuite([EVALS])).cases.map((c) => c.id);
    for (const id of [
      "linkcheck-canonical",
      "semverlite-canonical",
      "wordwrap-canonical",
      "linkcheck-always-empty",
      "linkcheck-final-without-work",
      "linkcheck-stale-version",
      "linkcheck-unknown-tool",
      "linkcheck-path-escape",
      "linkcheck-oversized-output",
      "linkcheck-invalid-fields",
    ]) {
      expect(ids).toContain(id);
    }
  });
});

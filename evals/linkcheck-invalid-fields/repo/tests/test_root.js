import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkLinks } from "../src/linkcheck.js";

const data = path.join(path.dirname(fileURLToPath(import.meta.url)), "data");

test("checkLinks accepts existing links in a root document", () => {
  assert.deepEqual(checkLinks(data, "index.md"), []);
});

import test from "node:test";
import assert from "node:assert/strict";
import { extractLinks } from "../src/linkcheck.js";

test("extractLinks finds inline links with their line numbers", () => {
  const md = "# Title\n\nSee [the guide](guide/intro.md) and [home](https://example.org).\n\n```\n[not](a-link.md)\n```\n";
  assert.deepEqual(extractLinks(md), [
    { text: "the guide", target: "guide/intro.md", line: 3 },
    { text: "home", target: "https://example.org", line: 3 },
  ]);
});

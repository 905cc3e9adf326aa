import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { applyGitPatch } from "./git-patch.js";
import type { TreeFile } from "./repo-tree.js";

const file = (text: string, exec = false): TreeFile => ({ data: Buffer.from(text), exec });
const tree = new Map<string, TreeFile>([
  ["a.py", file("x = 1\ny = 2\n")],
  ["run.sh", file("echo hi\n", true)],
]);

const refusal = (patch: string) => {
  try {
    applyGitPatch(tree, patch, "patch");
    return null;
  } catch (err) {
    return isMiniAgentError(err, "invalid_fields") ? err.message : "other";
  }
};

describe("applyGitPatch: a git diff applied in memory, never by a git program", () => {
  it("edits, creates with its mode, and keeps an edited file's exec bit; the tree given is unchanged", () => {
    const patch = [
      "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n",
      "diff --git a/bin/new.sh b/bin/new.sh\nnew file mode 100755\nindex 0..3\n--- /dev/null\n+++ b/bin/new.sh\n@@ -0,0 +1 @@\n+echo new\n",
      "diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo hi\n+echo bye\n",
    ].join("");
    const changes = applyGitPatch(tree, patch, "patch");
    expect(changes.map((c) => [c.rel, c.before?.data.toString() ?? null, c.after?.data.toString(), c.after?.exec])).toEqual([
      ["a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n", false],
      ["bin/new.sh", null, "echo new\n", true],
      ["run.sh", "echo hi\n", "echo bye\n", true],
    ]);
    expect(tree.get("a.py")?.data.toString()).toBe("x = 1\ny = 2\n");
  });

  it.each([
    ["a rename", "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n", /a rename or copy/],
    ["a binary change", "diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n", /a binary change/],
    ["a path out of the tree", "diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", /unsafe path/],
    ["a path into .git", "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", /unsafe path/],
    [
      "an edit of a file that is not there",
      "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n",
      /nope.py is changed by the patch but does not exist/,
    ],
    [
      "a creation of a file that is there",
      "diff --git a/a.py b/a.py\nnew file mode 100644\n--- /dev/null\n+++ b/a.py\n@@ -0,0 +1 @@\n+z\n",
      /a.py is created by the patch but already exists/,
    ],
    [
      "a hunk that does not apply",
      "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 9\n+y = 3\n",
      /a hunk does not apply to a.py/,
    ],
  ])("refuses %s, naming it", (_what, patch, said) => {
    expect(refusal(patch)).toMatch(said);
  });
});

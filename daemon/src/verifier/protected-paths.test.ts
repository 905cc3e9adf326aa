import { describe, expect, it } from "vitest";
import { manifestDigest, type Manifest } from "../workspace/manifest.js";
import { protectedChanges } from "./protected-paths.js";

const H = (c: string) => c.repeat(64);
function manifest(files: Record<string, string>, special: Record<string, string> = {}): Manifest {
  return { schema_version: 1, files, special, digest: manifestDigest(files, special) };
}
const task = { writable: ["src/**", "tests/test_agent_*.js"], creatable: ["tests/test_agent_*.js", "docs/new_*.md"] };
const base = manifest({ "src/a.js": H("a"), "notes.txt": H("b"), "tests/test_root.js": H("c"), "docs/new_old.md": H("d") });

describe("protectedChanges", () => {
  it("allows changes to writable paths and new files at creatable paths", () => {
    const now = manifest({ ...base.files, "src/a.js": H("e"), "src/b.js": H("f"), "tests/test_agent_x.js": H("1"), "docs/new_page.md": H("2") });
    expect(protectedChanges(task, base, now)).toEqual([]);
  });

  it("reports modified, removed and added protected paths, sorted", () => {
    const files: Record<string, string> = { ...base.files, "notes.txt": H("9"), "README.md": H("8") };
    delete files["tests/test_root.js"];
    expect(protectedChanges(task, base, manifest(files))).toEqual(["README.md", "notes.txt", "tests/test_root.js"]);
  });

  it("creatable lets a file be added, not an existing one be modified", () => {
    const now = manifest({ ...base.files, "docs/new_old.md": H("7") });
    expect(protectedChanges(task, base, now)).toEqual(["docs/new_old.md"]);
  });

  it("a symlink planted even at a writable path is reported", () => {
    const now = manifest({ ...base.files }, { "src/link.js": "symlink:abc" });
    expect(protectedChanges(task, base, now)).toEqual(["src/link.js"]);
  });
});

import { describe, expect, it } from "vitest";
import { decideCommand } from "./decide-command.js";
import { resolveEffectivePolicy } from "./effective.js";
import { policyForImage } from "./image-programs.js";

const ci = resolveEffectivePolicy({ file: null, source: null, profile: "ci" });
const interactive = resolveEffectivePolicy({ file: null, source: null });

describe("the built-in allowlist meets the run's image", () => {
  it("regression: a ci run in the node image is told only the checks its image can run; the hint offered ruff, python3 and go", () => {
    const d = decideCommand(policyForImage(ci, "node", ["env", "node"]), ["node", "--version"]);
    expect(d).toMatchObject({ verdict: "deny", code: "policy_denied", rule: "policy:ci:commands.unlisted" });
    expect(d.reason).toContain("Commands that run here: node --check <path> (");
    expect(d.reason).not.toMatch(/ruff|python3|gofmt|go vet/);
  });

  it("keeps each family's own entries and what a custom image adds (ruff)", () => {
    const shapes = (family: string, programs: string[]) => policyForImage(interactive, family, programs).command_allow.map((s) => s[0]);
    expect(new Set(shapes("python", ["python", "python3", "python3.11"]))).toEqual(new Set(["python3", "python"]));
    expect(new Set(shapes("go", ["go", "gofmt"]))).toEqual(new Set(["go", "gofmt"]));
    expect(shapes("lint", ["python3", "ruff"])).toEqual(["python3", "ruff"]);
  });

  it("refuses a program the image lacks with the programs it has; a deny of the policy still speaks first; a path is the sandbox's to answer", () => {
    const node = policyForImage(interactive, "node", ["env", "node"]);
    expect(decideCommand(node, ["ruff", "check", "src"])).toMatchObject({ verdict: "deny", code: "program_missing", rule: "image:node" });
    expect(decideCommand(node, ["ruff", "check", "src"]).reason).toMatch(/^ruff is not in the node image, so nothing ran; the programs it has: env, node\./);
    expect(decideCommand(node, ["curl", "x"])).toMatchObject({ code: "policy_denied" });
    expect(decideCommand(node, ["node_modules/.bin/eslint", "src"])).toMatchObject({ verdict: "ask", code: "approval_required" });
    // an image not read (no sandbox, a run made before): nothing changes
    expect(policyForImage(interactive, "node", null)).toBe(interactive);
    expect(decideCommand(interactive, ["ruff", "check", "src"])).toMatchObject({ verdict: "allow" });
  });
});

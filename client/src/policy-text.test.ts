import { describe, expect, it } from "vitest";
import type { PolicyShowBody } from "../../daemon/src/contracts/api.js";
import { policyText } from "./render.js";

const shown = (policy: Partial<PolicyShowBody["policy"]>): PolicyShowBody => ({
  kind: "policy",
  policy: {
    profile: "interactive",
    tools: { read: "allow", write: "ask", command: "ask", test: "allow" },
    auto_edit: [],
    command_allow: [["go", "vet"]],
    deny_tokens: ["curl"],
    workspace: null,
    source: null,
    ...policy,
  },
  source_digest: null,
  workspace_file: null,
});

describe("policy show text", () => {
  it("says what an unlisted command gets: a person by default, denied under commands.unlisted deny", () => {
    expect(policyText(shown({}))).toMatch(/unlisted +ask a person/);
    expect(policyText(shown({ profile: "ci", command_unlisted: "deny" }))).toMatch(/unlisted +denied/);
    expect(policyText(shown({ profile: "ci", command_unlisted: "deny" }))).toContain("go vet");
  });

  it("regression: with tools.command deny it no longer lists the allowlist as commands that run", () => {
    const text = policyText(shown({ tools: { read: "allow", write: "ask", command: "deny", test: "allow" } }));
    expect(text).not.toContain("run without asking:");
    expect(text).toContain("none run (tools.command deny beats the allowlist)");
  });

  it("prints allow entries as the whole argv each allows, placeholders bare and explained", () => {
    const text = policyText(
      shown({
        command_allow: [
          ["node", "--check", "<path>"],
          ["go", "vet", "<pkg>..."],
          ["make", "it work", "..."],
        ],
      }),
    );
    expect(text).toContain("  node --check <path>\n");
    expect(text).toContain("  go vet <pkg>...\n");
    expect(text).toContain("  make 'it work' ...\n");
    expect(text).toContain("(each the whole argv; <path>: a workspace file or folder");
    expect(policyText(shown({}))).not.toContain("each the whole argv");
  });

  it("lists the Verifier's extra commands with their argv", () => {
    expect(policyText(shown({ verify_commands: [{ name: "vet", command: ["go", "vet", "./..."] }] }))).toContain("vet: go vet ./...");
    expect(policyText(shown({}))).toContain("(no extra verify commands)");
  });
});

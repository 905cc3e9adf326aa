import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../contracts/tool-call.js";
import { toolDescriptions, toolsOffered } from "./descriptions.js";
import { validateToolCall } from "./validate.js";

describe("toolDescriptions", () => {
  it("are generated for exactly the protocol's tools, in OpenAI tools format, strict like the validator", () => {
    const tools = toolDescriptions();
    expect(tools.map((t) => t.function.name)).toEqual(TOOL_NAMES);
    expect(TOOL_NAMES).toEqual(["read_file", "search", "list_files", "apply_patch", "run_tests", "show_diff", "run_command"]);
    for (const t of tools) {
      expect(t.type).toBe("function");
      expect(t.function.description.length).toBeGreaterThan(10);
      expect(t.function.parameters).toMatchObject({ type: "object", additionalProperties: false });
      expect(t.function.parameters).not.toHaveProperty("$schema");
    }
    const patch = tools.find((t) => t.function.name === "apply_patch")!;
    expect(patch.function.parameters.required).toEqual(["path", "version", "old", "new"]);
  });

  it("every required field the description names is one the validator demands (no drift)", () => {
    for (const t of toolDescriptions()) {
      const required = (t.function.parameters.required as string[] | undefined) ?? [];
      for (const field of required) {
        const args: Record<string, unknown> = { path: "a", version: "absent", old: "", new: "", query: "q", preset: "p", argv: ["node", "--check", "a.js"] };
        const only = Object.fromEntries(required.filter((f) => f !== field).map((f) => [f, args[f]]));
        const v = validateToolCall({ call_id: "c", name: t.function.name, arguments: only });
        expect(v.ok, `${t.function.name} without ${field}`).toBe(false);
      }
    }
  });

  it("run_command is offered only with a container sandbox, and its description says where it runs and what happens to its changes", () => {
    expect(toolsOffered("container")).toContain("run_command");
    expect(toolsOffered("trusted_local")).not.toContain("run_command");
    expect(toolDescriptions({ backend: "trusted_local" }).map((t) => t.function.name)).not.toContain("run_command");
    const cmd = toolDescriptions({ backend: "container" }).find((t) => t.function.name === "run_command")!;
    expect(cmd.function.description).toMatch(/inside the run's sandbox/);
    expect(cmd.function.description).toMatch(/DISCARDED/);
    expect(cmd.function.description).toMatch(/changed_in_sandbox/);
    expect(cmd.function.description).toMatch(/apply_patch is the only way to change the workspace/);
    expect(cmd.function.parameters.required).toEqual(["argv"]);
    expect(cmd.function.parameters).toMatchObject({ properties: { argv: { type: "array", minItems: 1, maxItems: 64 } } });
  });
});

import { describe, expect, it } from "vitest";
import { TaskSpec } from "../../contracts/task-spec.js";
import { isMiniAgentError } from "../../errors.js";
import { TEST_TASK } from "../../store/ledger.testkit.js";
import { checkDependenciesPresent } from "./dependency-check.js";

const withCommand = (command: string[], verify?: string[]) =>
  TaskSpec.parse({
    ...TEST_TASK,
    test_presets: { unit: { command } },
    ...(verify && { verify_commands: [{ name: "lint", command: verify }] }),
  });
const LAYER = { folder: "node_modules" as const, key: "a".repeat(64), volume: `mini-agent-layer-${"a".repeat(12)}` };

describe("a runner from node_modules needs its layer", () => {
  it("regression: a drafted mocha run on a workspace with no node_modules and no installed layer was made and failed at its first run_tests on a missing module; it is refused naming env build", () => {
    let err: unknown;
    try {
      checkDependenciesPresent(withCommand(["node", "node_modules/.bin/mocha", "--reporter", "xunit"]), [], "/w/p");
    } catch (e) {
      err = e;
    }
    expect(isMiniAgentError(err, "invalid_workspace")).toBe(true);
    expect((err as Error).message).toContain("the tests run node_modules/.bin/mocha, but this workspace has no node_modules");
    expect((err as Error).message).toContain('env build --workspace "/w/p" --install "npm ci"');
  });

  it("a verify command counts too, in any of its spellings; one layer of node_modules, or no node_modules path, is enough to go on", () => {
    expect(() => checkDependenciesPresent(withCommand(["node", "--test"], ["./node_modules/.bin/eslint", "."]), [], "/w")).toThrow(/eslint/);
    expect(() => checkDependenciesPresent(withCommand(["node", "/workspace/node_modules/jest/bin/jest.js"]), [], "/w")).toThrow(/jest/);
    expect(() => checkDependenciesPresent(withCommand(["node", "node_modules/.bin/mocha"]), [LAYER], "/w")).not.toThrow();
    expect(() => checkDependenciesPresent(withCommand(["node", "--test", "tests/node_modules.test.js"]), [], "/w")).not.toThrow();
  });
});

import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { DEFAULT_TOOL_LIMITS, resolveLimits } from "./limits.js";

describe("resolveLimits", () => {
  it("overrides single keys and keeps the rest", () => {
    expect(resolveLimits({ testOutputBytes: 256 })).toEqual({ ...DEFAULT_TOOL_LIMITS, testOutputBytes: 256 });
  });

  it("an unknown or misspelled limit fails loudly, naming the known ones", () => {
    let caught: unknown;
    try {
      resolveLimits({ testOutputByte: 256 } as never);
    } catch (err) {
      caught = err;
    }
    expect(isMiniAgentError(caught, "invalid_request")).toBe(true);
    expect((caught as Error).message).toContain("testOutputBytes");
  });

  it("refuses a non-positive or fractional limit", () => {
    expect(() => resolveLimits({ diffMaxBytes: 0 })).toThrow();
    expect(() => resolveLimits({ diffMaxBytes: 1.5 })).toThrow();
  });
});

import { describe, expect, it } from "vitest";
import { crashHookFromEnv } from "./crash.js";

describe("crash points", () => {
  it("do nothing unless the test-only variable names one", () => {
    let kills = 0;
    crashHookFromEnv({}, () => kills++)("after_intent");
    expect(kills).toBe(0);
  });
  it("fire only at the named point", () => {
    const hits: string[] = [];
    const hook = crashHookFromEnv({ MINI_AGENT_CRASH_AT: "during_verifying" }, () => hits.push("kill"));
    hook("after_intent");
    hook("during_verifying");
    expect(hits).toEqual(["kill"]);
  });
  it("refuse an unknown point name loudly", () => {
    expect(() => crashHookFromEnv({ MINI_AGENT_CRASH_AT: "after_lunch" })).toThrow(/not a crash point/);
  });
});

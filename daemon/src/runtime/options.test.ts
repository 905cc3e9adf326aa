import { describe, expect, it } from "vitest";
import { createRunService } from "./service-impl.js";

describe("createRunService options", () => {
  it("refuses an unknown option loudly, naming the known ones", () => {
    expect(() => createRunService({ stateDir: "/nonexistent", executorFactory: () => null as never, verifiers: 1 } as never)).toThrow(
      /unknown RunService option\(s\): verifiers; known: .*verifier/,
    );
  });
  it("refuses a missing executorFactory", () => {
    expect(() => createRunService({ stateDir: "/nonexistent" } as never)).toThrow(/needs stateDir and executorFactory/);
  });
});

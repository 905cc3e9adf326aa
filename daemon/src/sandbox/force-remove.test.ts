import { describe, expect, it } from "vitest";
import { forceRemove } from "./force-remove.js";

/** An engine answer per call, in order: null is success, a number an HTTP error status. */
function engine(answers: Array<number | null>) {
  const calls: Array<{ force: boolean; v?: boolean }> = [];
  return {
    calls,
    async remove(options: { force: boolean; v?: boolean }) {
      calls.push(options);
      const status = answers[calls.length - 1] ?? null;
      if (status !== null) throw Object.assign(new Error(`(HTTP code ${status}) removal refused`), { statusCode: status });
    },
  };
}

const NO_WAIT = { waits: [0, 0, 0] };

describe("forceRemove", () => {
  it("regression: one refusal from a busy engine (409 removal in progress) left the sandbox behind; it is now tried again", async () => {
    const e = engine([409, null]);
    expect(await forceRemove(e, { withVolumes: true, ...NO_WAIT })).toBeNull();
    expect(e.calls).toEqual([
      { force: true, v: true },
      { force: true, v: true },
    ]);
  });

  it("already gone (404) is success at once", async () => {
    const e = engine([404]);
    expect(await forceRemove(e, NO_WAIT)).toBeNull();
    expect(e.calls).toEqual([{ force: true }]);
  });

  it("answers the last refusal after every try failed, without throwing", async () => {
    const e = engine([500, 409, 500, 500]);
    expect(await forceRemove(e, NO_WAIT)).toBe("500: (HTTP code 500) removal refused");
    expect(e.calls).toHaveLength(4);
  });
});

import { describe, expect, it } from "vitest";
import { patchText } from "../../../daemon/src/tools/patch-text.js";
import { editRegion } from "./gold-replay.js";

/** Every region must turn `b` into `a` by apply_patch's own rule, whatever the edit. */
function roundTrip(b: string, a: string) {
  const r = editRegion(b, a);
  expect(r).not.toBeNull();
  const applied = patchText(b, r!.old, r!.new);
  expect(applied).toEqual({ ok: true, after: a });
  return r!;
}

describe("editRegion: the gold patch as apply_patch calls", () => {
  it("a one-line fix replaces that line only", () => {
    expect(roundTrip("a\nb\nc\n", "a\nB\nc\n")).toEqual({ old: "b\n", new: "B\n" });
  });

  it("a line repeated elsewhere takes its neighbours until the text is unique", () => {
    const r = roundTrip("x\nsame\ny\nsame\nz\n", "x\nsame\ny\nSAME\nz\n");
    expect(r.old).toBe("y\nsame\nz\n");
  });

  it.each([
    ["an insertion at the end", "a\nb\n", "a\nb\nc\n"],
    ["an insertion at the start", "a\nb\n", "c\na\nb\n"],
    ["a deletion", "a\nb\nc\n", "a\nc\n"],
    ["no newline at the end", "a\nb", "a\nB"],
    ["blank lines only", "\n\n\n", "\n\nx\n\n"],
    ["two distant changes", "1\n2\n3\n4\n5\n", "one\n2\n3\n4\nfive\n"],
    ["everything", "a\n", "b\n"],
  ])("%s round-trips through apply_patch's rule", (_what, b, a) => {
    roundTrip(b, a);
  });

  it("an empty base file has no region apply_patch could quote", () => {
    expect(editRegion("", "x\n")).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import { formatActionEntry, parseActionEntry, seedSource } from "./go-seed.js";

const A = "a".repeat(64);
const B = "b".repeat(64);

describe("go cache seed", () => {
  it("reads and writes an action entry exactly as Go 1.19's cache does (%20d fields)", () => {
    const text = `v1 ${A} ${B}                  368  1796181348000288340\n`;
    const e = parseActionEntry(text);
    expect(e).toMatchObject({ action: A, output: B, size: 368 });
    expect(formatActionEntry({ ...e!, time: 1796181348000288340n })).toBe(text);
    expect(formatActionEntry({ ...e!, time: 0n })).toBe(`v1 ${A} ${B}                  368                    0\n`);
  });

  it("refuses what is not an action entry, so an unexpected cache layout stops the build", () => {
    expect(parseActionEntry(`v2 ${A} ${B} 1 2\n`)).toBeNull();
    expect(parseActionEntry(`v1 ${A} ${B} 1 2`)).toBeNull();
    expect(parseActionEntry("go index v1")).toBeNull();
  });

  it("imports every listed standard package but internal and vendored ones", () => {
    const src = seedSource(["fmt", "net/http", "internal/abi", "crypto/internal/boring", "vendor/golang.org/x/net/idna", "", " os "]);
    expect(src).toBe('package seed\n\nimport (\n\t_ "fmt"\n\t_ "net/http"\n\t_ "os"\n)\n');
  });
});

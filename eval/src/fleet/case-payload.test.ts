import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import tarStream from "tar-stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { loadCase } from "../case-load.js";
import { packCase, unpackCase } from "./case-payload.js";

const SHIPPED = path.resolve(import.meta.dirname, "../../../evals/linkcheck-canonical");
let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ma-payload-"));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return err.code;
    throw err;
  }
  return "accepted";
}

async function tarOf(entries: Array<{ name: string; type?: "file" | "symlink"; body?: string; linkname?: string }>): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c: unknown) => chunks.push(c as Buffer));
  const end = new Promise<void>((r) => pack.on("end", () => r()));
  for (const e of entries) pack.entry({ name: e.name, type: e.type ?? "file", ...(e.linkname && { linkname: e.linkname }) }, e.body ?? "");
  pack.finalize();
  await end;
  return Buffer.concat(chunks);
}

describe("case payload", () => {
  it("packs a shipped case deterministically and unpacks it into the same case version", async () => {
    const a = await packCase(SHIPPED);
    const b = await packCase(SHIPPED);
    expect(a.sha256).toBe(b.sha256);
    expect(a.tar.equals(b.tar)).toBe(true);
    const into = path.join(tmp, "linkcheck-canonical");
    await unpackCase(a.tar, a.sha256, into);
    expect((await loadCase(into)).hash).toBe((await loadCase(SHIPPED)).hash);
  });

  it("refuses a case over the size cap with case_payload_too_large, naming the cap", async () => {
    try {
      await packCase(SHIPPED, 1000);
      expect.unreachable();
    } catch (err) {
      expect(isMiniAgentError(err, "case_payload_too_large")).toBe(true);
      expect((err as Error).message).toContain("at most 1000 bytes");
    }
  });

  it("regression: a payload whose bytes differ from the job's SHA-256 is refused before anything is written", async () => {
    const p = await packCase(SHIPPED);
    const tampered = Buffer.from(p.tar);
    tampered[600] = tampered[600]! ^ 1;
    const into = path.join(tmp, "c");
    expect(await codeOf(unpackCase(tampered, p.sha256, into))).toBe("case_payload_mismatch");
    expect(fs.existsSync(into)).toBe(false);
  });

  it.each([
    ["a path outside the case", [{ name: "repo/../../escape.txt", body: "x" }]],
    ["an unknown top-level entry", [{ name: "evil.sh", body: "x" }]],
    ["a symlink", [{ name: "repo/link", type: "symlink" as const, linkname: "/etc/passwd" }]],
  ])("refuses %s even when its hash matches", async (_what, entries) => {
    const tar = await tarOf(entries);
    const { createHash } = await import("node:crypto");
    const into = path.join(tmp, "c");
    expect(await codeOf(unpackCase(tar, createHash("sha256").update(tar).digest("hex"), into))).toBe("case_payload_mismatch");
    expect(fs.existsSync(path.join(tmp, "escape.txt"))).toBe(false);
  });
});

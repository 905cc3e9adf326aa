import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import tarStream from "tar-stream";
import { afterEach, describe, expect, it } from "vitest";
import { extractInstalled } from "./install-extract.js";

type E = { name: string; type?: "file" | "directory" | "symlink"; body?: string; linkname?: string; mode?: number };

function tarOf(entries: E[]): NodeJS.ReadableStream {
  const pack = tarStream.pack();
  for (const e of entries) {
    if (e.type === "directory" || e.type === "symlink") pack.entry({ name: e.name, type: e.type, linkname: e.linkname, mode: e.mode ?? 0o755 });
    else pack.entry({ name: e.name, mode: e.mode ?? 0o644 }, e.body ?? "");
  }
  pack.finalize();
  return pack as unknown as NodeJS.ReadableStream;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "inst-x-"));
  dirs.push(d);
  return d;
};
const LIMITS = { maxBytes: 1024, maxFiles: 100 };

describe("extractInstalled: what an install sandbox produced, written as data", () => {
  it("writes folders, files (exec bit kept, set-id bits dropped) and links as the tar holds them", async () => {
    const dest = tmp();
    await extractInstalled(
      tarOf([
        { name: "node_modules/", type: "directory" },
        { name: "node_modules/a/", type: "directory" },
        { name: "node_modules/a/index.js", body: "x" },
        { name: "node_modules/a/cli.js", body: "y", mode: 0o4755 },
        { name: "node_modules/.bin/", type: "directory" },
        { name: "node_modules/.bin/cli", type: "symlink", linkname: "../a/cli.js" },
      ]),
      dest,
      "node_modules",
      LIMITS,
    );
    expect(fs.readFileSync(path.join(dest, "node_modules/a/index.js"), "utf8")).toBe("x");
    expect(fs.statSync(path.join(dest, "node_modules/a/cli.js")).mode & 0o7777).toBe(0o755);
    expect(fs.readlinkSync(path.join(dest, "node_modules/.bin/cli"))).toBe("../a/cli.js");
  });

  it("regression: a file written through a link the tar made (node_modules/evil -> /etc, then evil/x) is refused, nothing lands outside", async () => {
    const dest = tmp();
    const outside = tmp();
    const p = extractInstalled(
      tarOf([
        { name: "node_modules/", type: "directory" },
        { name: "node_modules/evil", type: "symlink", linkname: outside },
        { name: "node_modules/evil/x", body: "pwned" },
      ]),
      dest,
      "node_modules",
      LIMITS,
    );
    await expect(p).rejects.toMatchObject({ code: "sandbox_error" });
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("refuses a path that leaves the folder and a result over the byte limit", async () => {
    await expect(extractInstalled(tarOf([{ name: "node_modules/../../escape", body: "x" }]), tmp(), "node_modules", LIMITS)).rejects.toMatchObject({
      code: "sandbox_error",
    });
    await expect(
      extractInstalled(
        tarOf([
          { name: "node_modules/", type: "directory" },
          { name: "node_modules/big", body: "x".repeat(2048) },
        ]),
        tmp(),
        "node_modules",
        LIMITS,
      ),
    ).rejects.toMatchObject({ code: "sandbox_error", message: expect.stringContaining("more than 1024 bytes") });
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { parseRunArgs } from "../run-args.js";
import { readQueuePasswordFile, resolveQueueTarget } from "./queue-password.js";

const SECRET = "pw-canary-4b1d";
let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ma-qpw-"));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

function file(name: string, text: string, mode = 0o600): string {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  fs.chmodSync(f, mode);
  return f;
}

function refusal(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("accepted");
}

describe("--queue-password-file", () => {
  it("reads the first line, its line end stripped, and shows the URL only redacted", () => {
    expect(readQueuePasswordFile(file("a", `${SECRET}\n`))).toBe(SECRET);
    expect(readQueuePasswordFile(file("b", `${SECRET}\r\nsecond line\n`))).toBe(SECRET);
    expect(readQueuePasswordFile(file("c", SECRET, 0o400))).toBe(SECRET);
    const t = resolveQueueTarget("redis://127.0.0.1:6390/2", file("d", `${SECRET}\n`));
    expect(t).toMatchObject({ host: "127.0.0.1", port: 6390, db: 2, password: SECRET, display: "redis://***@127.0.0.1:6390/2" });
    expect(resolveQueueTarget("rediss://h:1/0", file("e", SECRET)).display).toBe("rediss://***@h:1/0");
  });

  it.each([
    [0o640, "0640"],
    [0o604, "0604"],
    [0o644, "0644"],
  ])("refuses a file readable by group or others (mode %o), like ssh, naming the mode and the fix", (mode, shown) => {
    const f = file("loose", `${SECRET}\n`, mode);
    const r = refusal(() => readQueuePasswordFile(f));
    expect(r.code).toBe("queue_password_file_invalid");
    expect(r.message).toContain(`permissions ${shown} are too open`);
    expect(r.message).toContain(`chmod 600 ${f}`);
    expect(r.message).not.toContain(SECRET);
  });

  it.each([
    ["an empty file", () => file("empty", "")],
    ["a file whose first line is empty", () => file("nl", `\n${SECRET}\n`)],
    ["a missing file", () => path.join(tmp, "nope")],
    ["a folder", () => tmp],
  ])("refuses %s with queue_password_file_invalid", (_what, make) => {
    const r = refusal(() => resolveQueueTarget("redis://h:1/0", make()));
    expect(r.code).toBe("queue_password_file_invalid");
    expect(r.message).not.toContain(SECRET);
  });

  it("refuses a password in both --queue and the file, naming the two, without showing either", () => {
    const r = refusal(() => resolveQueueTarget(`redis://:${SECRET}@h:1/0`, file("p", "other-pw\n")));
    expect(r.code).toBe("queue_url_invalid");
    expect(r.message).toContain("--queue redis://***@h:1/0 holds a password and --queue-password-file gives one too");
    expect(r.message).not.toContain(SECRET);
    expect(r.message).not.toContain("other-pw");
  });

  it("eval run takes the flag only with --queue, resolved against the working folder", () => {
    const ok = parseRunArgs(["s", "--output", "o", "--queue", "redis://h:1/0", "--queue-password-file", "pw"], "/w");
    expect(ok).toMatchObject({ ok: true, opts: { queue: "redis://h:1/0", queuePasswordFile: "/w/pw" } });
    expect(parseRunArgs(["s", "--output", "o", "--queue-password-file", "pw"], "/w")).toMatchObject({
      ok: false,
      message: expect.stringContaining("--queue-password-file FILE goes with --queue"),
    });
  });
});

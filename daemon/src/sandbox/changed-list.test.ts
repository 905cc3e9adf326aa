import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { codeOf } from "../errors.testkit.js";
import { changedFromOutcome, checkChangedRequest, decodePath } from "./changed-list.js";
import { DockerExecutor } from "./docker-executor.js";
import type { ExecOutcome } from "./exec-outcome.js";
import { LocalExecutor } from "./local-executor.js";

/**
 * How the lister's answer (`run --changed MAXPATHS`: hex lines, an end line,
 * an exit code) becomes a ChangedList. The lister itself runs in real
 * sandboxes in tests/sandbox/changed.test.ts; here each answer is exact.
 */
const outcome = (o: Partial<ExecOutcome>): ExecOutcome => ({
  exitCode: 0,
  timedOut: false,
  cancelled: false,
  truncated: false,
  stdout: "",
  stderr: "",
  spawnerLost: false,
  ...o,
});
const hex = (s: string | Buffer) => Buffer.from(s).toString("hex");

describe("changedFromOutcome", () => {
  it("decodes the hex lines in order, a newline in a name included, and the cut flag", () => {
    const stdout = `${hex("a.txt")}\n${hex("dir/new\nline")}\nend 2 0\n`;
    expect(changedFromOutcome(outcome({ stdout }), 10)).toEqual({ status: "listed", paths: ["a.txt", "dir/new\nline"], truncated: false });
    expect(changedFromOutcome(outcome({ stdout: `${hex("a")}\nend 1 1\n` }), 1)).toEqual({ status: "listed", paths: ["a"], truncated: true });
    expect(changedFromOutcome(outcome({ stdout: "end 0 0\n" }), 1)).toEqual({ status: "listed", paths: [], truncated: false });
  });

  it("exit 21 is unavailable with the lister's reason", () => {
    expect(changedFromOutcome(outcome({ exitCode: 21, stderr: "no start fingerprint of /workspace\n" }), 5)).toEqual({
      status: "unavailable",
      reason: "no start fingerprint of /workspace",
    });
  });

  it("regression: a list that does not parse whole (no end line, wrong count, over the cap, cut capture) is unavailable, never a partial list", () => {
    const cases: Array<[Partial<ExecOutcome>, number]> = [
      [{ stdout: `${hex("a")}\n` }, 5],
      [{ stdout: `${hex("a")}\n${hex("b")}\nend 1 0\n` }, 5],
      [{ stdout: `${hex("a")}\n${hex("b")}\nend 2 0\n` }, 1],
      [{ stdout: `${hex("a")}\nend 1 0` }, 5],
      [{ stdout: `zz\nend 1 0\n` }, 5],
      [{ stdout: `${hex("a")}\nend 1 0\n`, truncated: true }, 5],
    ];
    for (const [o, max] of cases) expect(changedFromOutcome(outcome(o), max).status, JSON.stringify(o)).toBe("unavailable");
  });

  it("an old image without the mode (usage, exit 2), a timeout, a cancel or a lost sandbox is unavailable", () => {
    for (const o of [
      { exitCode: 2, stderr: "usage: run …" },
      { exitCode: null, timedOut: true },
      { exitCode: null, cancelled: true },
      { exitCode: null, spawnerLost: true },
    ]) {
      expect(changedFromOutcome(outcome(o), 5).status).toBe("unavailable");
    }
  });
});

describe("decodePath", () => {
  it("keeps valid UTF-8 as text and writes each high byte of a non-UTF-8 name as \\xNN", () => {
    expect(decodePath(Buffer.from("ünï/cödé"))).toBe("ünï/cödé");
    expect(decodePath(Buffer.from([0x61, 0xff, 0x62, 0xc3, 0xa9]))).toBe("a\\xffb\\xc3\\xa9");
  });
});

describe("listChanged requests", () => {
  it("a warm-session request with a maxPaths outside 1..10000 is invalid_fields", () => {
    for (const maxPaths of [0, -1, 1.5, 10_001, Number.NaN]) expect(codeOf(() => checkChangedRequest({ maxPaths }))).toBe("invalid_fields");
    expect(codeOf(() => checkChangedRequest({ maxPaths: 50 }))).toBe("no error");
  });

  it("a fresh sandbox refuses listChanged with changed_list_unsupported before the engine is asked for anything", async () => {
    const calls: string[] = [];
    // every engine method records that it was called: none may be
    const docker = new Proxy({}, { get: (_t, name) => (calls.push(String(name)), () => Promise.reject(new Error("engine used"))) }) as unknown as Docker;
    const ex = new DockerExecutor({ lockPath: "/nonexistent/lock.json", docker });
    const err = await ex
      .run({ runId: "r", purpose: "candidate", argv: ["node", "-e", "0"], workspaceDir: "/nonexistent", timeoutMs: 1000, listChanged: { maxPaths: 5 } })
      .catch((e) => e);
    expect(isMiniAgentError(err, "changed_list_unsupported")).toBe(true);
    expect(calls).toEqual([]);
  });

  it("trusted_local refuses listChanged with changed_list_unsupported and copies nothing (run and session exec)", async () => {
    const tmpRoot = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-changed-local-"));
    const ws = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-changed-ws-"));
    try {
      const ex = new LocalExecutor({ tmpRoot });
      const req = { argv: [process.execPath, "-e", "0"], purpose: "candidate" as const, workspaceDir: ws, timeoutMs: 10_000, listChanged: { maxPaths: 5 } };
      expect(isMiniAgentError(await ex.run({ ...req, runId: "r" }).catch((e) => e), "changed_list_unsupported")).toBe(true);
      const session = await ex.openSession("r");
      expect(isMiniAgentError(await session.exec(req).catch((e) => e), "changed_list_unsupported")).toBe(true);
      await session.close();
      expect(await fs.readdir(tmpRoot)).toEqual([]);
    } finally {
      await fs.rm(tmpRoot, { recursive: true, force: true });
      await fs.rm(ws, { recursive: true, force: true });
    }
  });
});

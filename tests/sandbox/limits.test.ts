import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import type { SandboxSession } from "../../daemon/src/sandbox/executor.js";
import { availableRuntimes, freshStateDir, leftoversWithPrefix, removeWithPrefix, runIdPrefix, workspace } from "./helpers.js";

/**
 * A warm sandbox between commands (issue 10 item 10). Real engine, both
 * runtimes; no timing assertions.
 */
const FILES: Record<string, string> = {
  // leaves things in /tmp a later command must not see, some of them hard to remove
  "tmp-write.mjs": `import fs from "node:fs";
fs.writeFileSync("/tmp/marker", "from the previous command");
fs.mkdirSync("/tmp/locked/deeper", { recursive: true });
fs.writeFileSync("/tmp/locked/deeper/file", "x");
fs.chmodSync("/tmp/locked/deeper", 0);
fs.chmodSync("/tmp/locked", 0);
fs.writeFileSync("/tmp/.hidden", "x");
fs.chmodSync("/tmp/.hidden", 0);
console.log(JSON.stringify(fs.readdirSync("/tmp").sort()));`,
  "tmp-list.mjs": `import fs from "node:fs"; console.log(JSON.stringify(fs.readdirSync("/tmp").sort()));`,
};

let state: Awaited<ReturnType<typeof freshStateDir>>;
let ws: string;
const runtimes = await availableRuntimes();

beforeAll(async () => {
  state = await freshStateDir();
  ws = await workspace(FILES);
});
afterAll(async () => {
  await fs.rm(ws, { recursive: true, force: true });
  await fs.rm(state.stateDir, { recursive: true, force: true });
});

describe.each(runtimes)("a warm sandbox between commands on %s", (runtime) => {
  const prefix = runIdPrefix(`limits-${runtime}`);
  const executor = (config: Record<string, unknown> = {}) => new DockerExecutor({ lockPath: state.lockPath, config: { runtime, ...config } });
  const exec = (s: SandboxSession, argv: string[], timeoutMs = 120_000) => s.exec({ purpose: "candidate", argv, workspaceDir: ws, timeoutMs });
  afterAll(async () => {
    const left = await leftoversWithPrefix(prefix);
    await removeWithPrefix(prefix);
    expect(left).toEqual({ containers: [], volumes: [] });
  });

  it("regression (issue 10 item 10): every command in a warm sandbox starts with an empty /tmp, even after one left unreadable files there", async () => {
    const session = await executor().openSession(`${prefix}-tmp`);
    try {
      const wrote = await exec(session, ["node", "tmp-write.mjs"]);
      expect(wrote.exit_code, wrote.stderr).toBe(0);
      expect(JSON.parse(wrote.stdout)).toEqual(expect.arrayContaining([".hidden", "locked", "marker"]));
      const box = (await leftoversWithPrefix(`${prefix}-tmp`)).containers;
      for (let i = 0; i < 2; i++) {
        const seen = await exec(session, ["node", "tmp-list.mjs"]);
        expect(seen.exit_code, seen.stderr).toBe(0);
        expect(JSON.parse(seen.stdout)).toEqual([]);
      }
      // emptied in place: the same warm container, not a replacement
      expect((await leftoversWithPrefix(`${prefix}-tmp`)).containers).toEqual(box);
    } finally {
      await session.close();
    }
  });
});

import { constants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { statePath } from "../../config/state-dir.js";
import { describeZodError } from "../../contracts/common.js";
import { MiniAgentError } from "../../errors.js";

/**
 * Where a run's paused SDK RunState is kept between processes:
 * `<state>/orchestrators/agents-sdk/<run_id>.json` (folders 0700, file 0600,
 * written atomically: temp file, fsync, rename, fsync the folder). It only
 * says where in the SDK's own flow the run paused; the ledger stays the truth
 * (resume.ts reconciles the two, and a missing or unreadable file only means
 * the run starts a fresh Runner from the ledger).
 */
const SavedRunState = z.strictObject({
  schema_version: z.literal(1),
  run_id: z.string(),
  /** the SDK release that wrote `state`; another release's state is not resumed */
  sdk_version: z.string(),
  /** RunState.toString() of the Runner's result at the approval pause */
  state: z.string().min(2),
});
export type SavedRunState = z.infer<typeof SavedRunState>;

/** Run ids we make are `run_` + hex; anything else is refused before it names a file. */
const FILE_SAFE = /^[A-Za-z0-9_-]{1,128}$/;

export class SavedRunStates {
  private readonly dir: string;

  constructor(stateDir: string) {
    this.dir = path.join(statePath(stateDir, "orchestrators"), "agents-sdk");
  }

  fileFor(runId: string): string {
    if (!FILE_SAFE.test(runId)) throw new MiniAgentError("internal", `run id ${JSON.stringify(runId)} cannot name a saved state file`);
    return path.join(this.dir, `${runId}.json`);
  }

  async save(saved: SavedRunState): Promise<void> {
    const file = this.fileFor(saved.run_id);
    await fs.mkdir(path.dirname(this.dir), { recursive: true, mode: 0o700 });
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.rm(tmp, { force: true });
    const fh = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(`${JSON.stringify(saved)}\n`, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
    const dir = await fs.open(this.dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  /** The saved state, `absent`, or `invalid` with why (a torn or foreign file is not trusted). */
  async load(runId: string): Promise<{ kind: "found"; saved: SavedRunState } | { kind: "absent" } | { kind: "invalid"; why: string }> {
    let text: string;
    try {
      text = await fs.readFile(this.fileFor(runId), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
      return { kind: "invalid", why: `unreadable (${(err as NodeJS.ErrnoException).code ?? "error"})` };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { kind: "invalid", why: "not JSON" };
    }
    const parsed = SavedRunState.safeParse(json);
    if (!parsed.success) return { kind: "invalid", why: describeZodError(parsed.error) };
    if (parsed.data.run_id !== runId) return { kind: "invalid", why: `it belongs to run ${parsed.data.run_id}` };
    return { kind: "found", saved: parsed.data };
  }

  async remove(runId: string): Promise<void> {
    await fs.rm(this.fileFor(runId), { force: true });
  }
}

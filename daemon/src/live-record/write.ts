import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { statePath } from "../config/state-dir.js";
import { MiniAgentError } from "../errors.js";
import { redactDeep } from "../redact/index.js";
import { LiveRunRecord } from "./record.js";

/**
 * Writes one live run record to <state>/live-runs/, a folder of its own: live
 * runs never overwrite offline reports, and never each other (a resumed run
 * gets a second record, a failed run keeps its record). The file appears
 * atomically and only under a name that did not exist (link(2) refuses to
 * replace), so a reader never sees half a record.
 */
export async function writeLiveRunRecord(stateDir: string, record: LiveRunRecord, knownSecrets: readonly string[] = []): Promise<string> {
  // the daemon's one rule set (redact/) and the live key: a reason or an id can quote either
  const clean = redactDeep(record, knownSecrets);
  const parsed = LiveRunRecord.safeParse(clean);
  if (!parsed.success) {
    throw new MiniAgentError("internal", `live run record is invalid: ${z.prettifyError(parsed.error)}`);
  }
  const dir = statePath(stateDir, "liveRuns");
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const stamp = parsed.data.recorded_at.replace(/[:.]/g, "-");
  const text = `${JSON.stringify(parsed.data, null, 2)}\n`;
  const tmp = path.join(dir, `.${parsed.data.run_id}.${randomBytes(6).toString("hex")}.tmp`);
  await fs.writeFile(tmp, text, { mode: 0o600, flag: "wx" });
  try {
    for (let n = 0; n < 100; n++) {
      // always numbered, so names sort in the order they were written
      const name = `${parsed.data.run_id}.${stamp}.${String(n).padStart(2, "0")}.json`;
      const target = path.join(dir, name);
      try {
        await fs.link(tmp, target);
        return target;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    throw new MiniAgentError("internal", `too many live run records for ${parsed.data.run_id} at ${parsed.data.recorded_at}`);
  } finally {
    await fs.unlink(tmp).catch(() => undefined);
  }
}

/** All records of the live-runs folder, oldest name first; unreadable or foreign files are skipped, not trusted. */
export async function listLiveRunRecords(stateDir: string): Promise<LiveRunRecord[]> {
  const dir = statePath(stateDir, "liveRuns");
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith(".json") && !n.startsWith(".")).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const out: LiveRunRecord[] = [];
  for (const name of names) {
    try {
      const parsed = LiveRunRecord.safeParse(JSON.parse(await fs.readFile(path.join(dir, name), "utf8")));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // not ours or half-written by something else: skipped
    }
  }
  return out;
}

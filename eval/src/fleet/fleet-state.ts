import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ImageFamily } from "../../../daemon/src/contracts/test-report.js";
import { writeAtomic } from "../run-state.js";

/**
 * The output folder's note of which eval run on the queue it is (fleet.json):
 * a resumed `eval run --queue` finds its jobs again by this id instead of
 * adding them twice; `--rerun` starts a new one; `eval cancel` reads it to
 * reach exactly this run's jobs. A run resumed after a cancel gets a new id
 * (`fresh`): the old id's cancel key would stop every case it runs again.
 */
const FleetFile = z.strictObject({
  schema_version: z.literal(1),
  suite_run: z.string().regex(/^[0-9a-f]{32}$/),
  queue: z.string(),
  /** the image families of the run's cases: `eval cancel` reaches a custom family's queues by them (absent in older files) */
  families: z.array(ImageFamily).max(256).optional(),
});
export const FLEET_FILE = "fleet.json";

function readFleetFile(output: string): z.infer<typeof FleetFile> | null {
  try {
    const parsed = FleetFile.safeParse(JSON.parse(fs.readFileSync(path.join(output, FLEET_FILE), "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function readSuiteRun(output: string): string | null {
  return readFleetFile(output)?.suite_run ?? null;
}

/** The image families the eval run's cases named (none known: an older fleet.json, or none). */
export function readSuiteFamilies(output: string): ImageFamily[] {
  return readFleetFile(output)?.families ?? [];
}

/** `queueDisplay` is the redacted URL: the file may be shared with the report, never the password. */
export function openSuiteRun(output: string, rerun: boolean, queueDisplay: string, fresh = false, families: readonly ImageFamily[] = []): string {
  const before = rerun || fresh ? null : readSuiteRun(output);
  const id = before ?? randomBytes(16).toString("hex");
  const file = { schema_version: 1, suite_run: id, queue: queueDisplay, families: [...new Set(families)].sort() };
  writeAtomic(path.join(output, FLEET_FILE), `${JSON.stringify(file)}\n`);
  return id;
}

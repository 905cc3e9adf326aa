import fs from "node:fs/promises";
import { MiniAgentError } from "../../daemon/src/errors.js";

/**
 * The report never overwrites evidence silently: an existing DIR is refused
 * unless `replace`, which first renames it to the first free `DIR.previous-N`.
 * Returns the name the old report was moved to, if any.
 */
export async function prepareOutputDir(dir: string, replace: boolean): Promise<string | null> {
  let exists = true;
  try {
    await fs.lstat(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    exists = false;
  }
  let movedTo: string | null = null;
  if (exists) {
    if (!replace) {
      throw new MiniAgentError(
        "invalid_request",
        `output directory ${dir} already exists; pass --replace to keep it as ${dir}.previous-N and write a new report`,
      );
    }
    for (let n = 1; ; n++) {
      const candidate = `${dir}.previous-${n}`;
      try {
        await fs.lstat(candidate);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        await fs.rename(dir, candidate);
        movedTo = candidate;
        break;
      }
    }
  }
  await fs.mkdir(dir, { recursive: true });
  return movedTo;
}

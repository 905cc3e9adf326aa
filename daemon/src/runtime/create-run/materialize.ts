import fs from "node:fs";
import path from "node:path";

/**
 * Copies a fixture's repo/ into the new workspace; symlinks are copied as links,
 * never followed. Async, so the API keeps answering while a large repo is copied.
 */
export async function materializeWorkspace(fixtureDir: string, workspace: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(workspace), { recursive: true });
  // exclusive: a folder that appeared since the check is someone else's and is never copied into or removed
  await fs.promises.mkdir(workspace);
  try {
    await fs.promises.cp(path.join(fixtureDir, "repo"), workspace, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true });
  } catch (err) {
    await fs.promises.rm(workspace, { recursive: true, force: true });
    throw err;
  }
}

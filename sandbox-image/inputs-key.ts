import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { repoPath, type ImageDefinition } from "./definitions.js";

const run = promisify(execFile);

/** Label an image built from a definition carries: `<family>:<inputs key>`. */
export const INPUTS_LABEL = "mini-agent.image-inputs";

/**
 * The repository files an image is assembled by: the builder and its recipes, the static helpers'
 * sources (whole folders, for their headers) and the label that names the sandbox protocol.
 * A change to any of them is a change to the image.
 */
const RECIPE_DIRS = ["sandbox-image", "probes/inside"];
const RECIPE_FILES = ["daemon/src/sandbox/labels.ts"];

/**
 * A digest of everything a family's image is made from, computed without assembling it: the
 * recipe (this repository's builder sources and the definition), the host's installed Debian
 * packages and their versions (every library, toolchain and compiler the build copies or runs
 * comes from one), and the size, time and inode of every host file the definition copies. Two
 * builds with the same key assemble the same root filesystem, so the second reuses the image
 * the first made instead of copying toolchains and recompiling the go seed (minutes).
 */
export async function imageInputsKey(def: ImageDefinition): Promise<string> {
  const h = createHash("sha256");
  const add = (label: string, value: string) => h.update(`${label}\0${value}\0`);
  add("definition", JSON.stringify(def));
  for (const rel of [...(await recipeFiles()), ...RECIPE_FILES]) add(`file ${rel}`, await fileDigest(rel));
  for (const [src] of [...def.assets, ...def.staticHelpers]) add(`source ${src}`, await fileDigest(src));
  add("packages", await installedPackages());
  for (const bin of def.binaries) add(`binary ${bin}`, statLine(bin));
  const excluded = (p: string) => (def.exclude ?? []).some((x) => p === x || p.startsWith(`${x}/`));
  for (const [src] of def.trees) {
    for (const file of await treeFiles(src, excluded)) add(`tree ${file}`, statLine(file));
  }
  return h.digest("hex");
}

async function fileDigest(rel: string): Promise<string> {
  return createHash("sha256")
    .update(await fs.readFile(repoPath(rel)))
    .digest("hex");
}

async function recipeFiles(): Promise<string[]> {
  const out: string[] = [];
  for (const dir of RECIPE_DIRS) {
    for (const entry of await fs.readdir(repoPath(dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || entry.name.endsWith(".test.ts") || entry.name.endsWith(".md")) continue;
      out.push(path.relative(repoPath("."), path.join(entry.parentPath, entry.name)));
    }
  }
  return out.sort();
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax, not a template
const DPKG_FORMAT = "${Package} ${Version} ${Architecture}\n";

/** `dpkg-query`'s list, or "" where there is no dpkg (then only the files' stat lines speak for the host). */
async function installedPackages(): Promise<string> {
  try {
    const { stdout } = await run("dpkg-query", ["-W", "-f", DPKG_FORMAT], { maxBuffer: 16 << 20 });
    return stdout.split("\n").sort().join("\n");
  } catch {
    return "";
  }
}

/** Synchronous on purpose: tens of thousands of small calls, where a promise each costs more than the call. */
function statLine(file: string): string {
  try {
    const real = fsSync.realpathSync(file);
    const st = fsSync.statSync(real);
    return `${real} ${st.size} ${st.mtimeMs} ${st.ino} ${st.mode}`;
  } catch {
    return "missing";
  }
}

/** Every entry below `dir` (links too, as the copy follows them), sorted; excluded subtrees left out. */
async function treeFiles(dir: string, excluded: (p: string) => boolean): Promise<string[]> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [dir];
  }
  return entries
    .map((e) => path.join(e.parentPath, e.name))
    .filter((p) => !excluded(p))
    .sort();
}

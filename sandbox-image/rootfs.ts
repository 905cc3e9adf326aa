import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { MiniAgentError } from "../daemon/src/errors.js";
import { repoPath, TMP_SEED_DIR, type ImageDefinition } from "./definitions.js";

const run = promisify(execFile);

/** The sandbox user: the image has exactly one unprivileged identity. */
export const SANDBOX_UID = 65534;

const PASSWD = "root:x:0:0:root:/root:/nonexistent\nnobody:x:65534:65534:nobody:/tmp:/nonexistent\n";
const GROUP = "root:x:0:\nnogroup:x:65534:\n";

/** `ldd` output -> the absolute paths the loader will open (vdso has no file). */
export function parseLdd(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split("\n")) {
    const arrow = line.match(/=>\s+(\/\S+)/);
    const bare = line.match(/^\s*(\/\S+)\s+\(/);
    const p = arrow?.[1] ?? bare?.[1];
    if (p && !out.includes(p)) out.push(p);
  }
  return out;
}

async function copyResolved(src: string, rootfs: string, dest = src): Promise<void> {
  const real = await fs.realpath(src);
  const target = path.join(rootfs, dest);
  await fs.mkdir(path.dirname(target), { recursive: true });
  await fs.copyFile(real, target);
  const mode = (await fs.stat(real)).mode & 0o755;
  await fs.chmod(target, mode);
}

/** Copies the shared libraries `ldd` lists for one host file; a static file has none (ldd exits non-zero). */
async function copyClosure(file: string, rootfs: string): Promise<void> {
  let stdout: string;
  try {
    ({ stdout } = await run("ldd", [file]));
  } catch {
    return;
  }
  for (const lib of parseLdd(stdout)) await copyResolved(lib, rootfs);
}

/** Where the host's loader finds a soname (`ldconfig -p`), so no library directory is hard-coded. */
export function parseLdconfig(output: string, soname: string): string | null {
  for (const line of output.split("\n")) {
    const m = line.match(/^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\/\S+)/);
    if (m && m[1] === soname && /64/i.test(m[2]!)) return m[3]!;
  }
  return null;
}

async function copyLibraries(sonames: string[], rootfs: string): Promise<void> {
  if (sonames.length === 0) return;
  const { stdout } = await run("ldconfig", ["-p"]);
  for (const soname of sonames) {
    const lib = parseLdconfig(stdout, soname);
    if (lib === null) throw new MiniAgentError("sandbox_error", `the host has no ${soname} (ldconfig -p); the image needs it for native add-ons`);
    await copyResolved(lib, rootfs);
    await copyClosure(lib, rootfs);
  }
}

/** Applies a definition's exact edits to files already copied into the root filesystem. */
async function applyPatches(patches: NonNullable<ImageDefinition["patches"]>, rootfs: string): Promise<void> {
  for (const { file, from, to } of patches) {
    const target = path.join(rootfs, file);
    const text = await fs.readFile(target, "utf8");
    const at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + 1) >= 0) {
      throw new MiniAgentError("sandbox_error", `cannot patch ${file}: the text to replace is not in it exactly once (a different host version?)`);
    }
    await fs.writeFile(target, text.slice(0, at) + to + text.slice(at + from.length));
  }
}

/** Regular files under `dir` that start with the ELF magic. */
async function elfFilesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const fh = await fs.open(file, "r");
    try {
      const head = Buffer.alloc(4);
      await fh.read(head, 0, 4, 0);
      if (head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) out.push(file);
    } finally {
      await fh.close();
    }
  }
  return out.sort();
}

/**
 * Writes a build context (`Dockerfile` + `rootfs/`) for one image definition
 * into `contextDir`, which is emptied first. Only the listed binaries, their
 * `ldd` closure, the assets and a minimal /etc go in: no shell, no package
 * manager, no setuid files.
 */
export async function assembleContext(def: ImageDefinition, contextDir: string): Promise<void> {
  await fs.rm(contextDir, { recursive: true, force: true });
  const rootfs = path.join(contextDir, "rootfs");
  await fs.mkdir(rootfs, { recursive: true });

  for (const bin of def.binaries) {
    await copyResolved(bin, rootfs);
    await copyClosure(bin, rootfs);
  }
  await copyLibraries(def.libraries ?? [], rootfs);
  const excluded = (src: string) => (def.exclude ?? []).some((x) => src === x || src.startsWith(x + "/"));
  for (const [src, dest] of def.trees) {
    await fs.cp(src, path.join(rootfs, dest), { recursive: true, dereference: true, filter: (from) => !excluded(from) });
  }
  await applyPatches(def.patches ?? [], rootfs);
  for (const dir of def.libraryClosureOf ?? []) {
    for (const file of await elfFilesUnder(dir)) if (!excluded(file)) await copyClosure(file, rootfs);
  }
  if (def.tmpSeed) {
    const seed = path.join(rootfs, TMP_SEED_DIR, def.tmpSeed.name);
    await fs.mkdir(seed, { recursive: true });
    await def.tmpSeed.build(seed, def.env);
  }
  for (const [link, target] of def.symlinks ?? []) {
    await fs.mkdir(path.dirname(path.join(rootfs, link)), { recursive: true });
    await fs.symlink(target, path.join(rootfs, link));
  }
  for (const [src, dest, mode] of def.assets) {
    await fs.mkdir(path.dirname(path.join(rootfs, dest)), { recursive: true });
    await fs.copyFile(repoPath(src), path.join(rootfs, dest));
    await fs.chmod(path.join(rootfs, dest), mode);
  }
  for (const [src, dest] of def.staticHelpers) {
    const out = path.join(rootfs, dest);
    await fs.mkdir(path.dirname(out), { recursive: true });
    // -static: a helper must not depend on what the image happens to contain.
    await run("gcc", ["-static", "-O2", "-o", out, repoPath(src)]);
    await run("strip", [out]).catch(() => undefined);
    await fs.chmod(out, 0o555);
  }
  await fs.mkdir(path.join(rootfs, "etc"), { recursive: true });
  await fs.writeFile(path.join(rootfs, "etc/passwd"), PASSWD, { mode: 0o444 });
  await fs.writeFile(path.join(rootfs, "etc/group"), GROUP, { mode: 0o444 });
  for (const dir of ["tmp", "workspace", "control", "proc", "sys", "dev"]) {
    await fs.mkdir(path.join(rootfs, dir), { recursive: true });
  }
  await fs.writeFile(path.join(contextDir, "Dockerfile"), dockerfile(def));
}

/** The programs on `pathVar` in an assembled root filesystem: every non-folder entry of its PATH folders, sorted. */
export async function pathPrograms(rootfs: string, pathVar: string): Promise<string[]> {
  const names = new Set<string>();
  for (const dir of pathVar.split(":").filter((d) => d.startsWith("/"))) {
    for (const e of await fs.readdir(path.join(rootfs, dir), { withFileTypes: true }).catch(() => [])) if (!e.isDirectory()) names.add(e.name);
  }
  return [...names].sort();
}

export function dockerfile(def: ImageDefinition): string {
  const env = Object.entries(def.env)
    .map(([k, v]) => `ENV ${k}=${JSON.stringify(v)}`)
    .join("\n");
  return ["FROM scratch", "COPY rootfs/ /", env, `USER ${SANDBOX_UID}:${SANDBOX_UID}`, "WORKDIR /workspace", `CMD ${JSON.stringify(def.cmd)}`, ""].join("\n");
}

import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { repoPath, type ImageDefinition } from "./definitions.js";

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
    const { stdout } = await run("ldd", [bin]);
    for (const lib of parseLdd(stdout)) await copyResolved(lib, rootfs);
  }
  for (const [src, dest] of def.trees) {
    await fs.cp(src, path.join(rootfs, dest), { recursive: true, dereference: true });
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

export function dockerfile(def: ImageDefinition): string {
  const env = Object.entries(def.env)
    .map(([k, v]) => `ENV ${k}=${JSON.stringify(v)}`)
    .join("\n");
  return [
    "FROM scratch",
    "COPY rootfs/ /",
    env,
    `USER ${SANDBOX_UID}:${SANDBOX_UID}`,
    "WORKDIR /workspace",
    `CMD ${JSON.stringify(def.cmd)}`,
    "",
  ].join("\n");
}

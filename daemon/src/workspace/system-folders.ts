import fs from "node:fs";
import path from "node:path";

/**
 * Folders of the operating system that are never a workspace: a run works in
 * place (ad hoc) or writes a fixture's copy there, and the daemon runs as root
 * in the usual setup, so `/etc` as a workspace would make the host's
 * configuration writable by the model. Checked on the REAL path, so a symlink
 * in a project folder pointing at `/etc` is refused too.
 */
export const SYSTEM_FOLDERS: readonly string[] = [
  "/etc",
  "/usr",
  "/var",
  "/proc",
  "/sys",
  "/dev",
  "/boot",
  "/opt",
  "/srv",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/run",
];

/**
 * Scratch folders below a system folder that users keep projects in, as they do
 * in /tmp: /var/tmp is the FHS place for temporary files kept across reboots
 * and is world-writable by design. Only what is BELOW it; /var/tmp itself
 * holds every user's scratch files and stays refused.
 */
const SCRATCH_BELOW: readonly string[] = ["/var/tmp"];

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/**
 * The real path of `p`: its nearest existing ancestor resolved (links
 * included) and the rest appended, so a folder that does not exist yet (a
 * fixture run's workspace) is judged by where it would be created.
 */
export function realPathOf(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  for (let cur = abs; ; cur = path.dirname(cur)) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      if (cur === path.dirname(cur)) return abs;
      rest.push(path.basename(cur));
    }
  }
}

/** The system folder a real path lies in (or is), or null. */
export function systemFolderOf(real: string): string | null {
  if (SCRATCH_BELOW.some((d) => real.startsWith(`${d}/`))) return null;
  return SYSTEM_FOLDERS.find((d) => under(real, d)) ?? null;
}

/** The end of the refusal: `workspace <given> ...`, naming the real path when a link led there. */
export function systemFolderRefusal(given: string, real: string, system: string): string {
  const what = real === system ? "is the system folder" : "is inside the system folder";
  const via = real === path.resolve(given) ? "" : `resolves to ${real}, which `;
  return `${via}${what} ${system}; give the project's folder (/tmp and /var/tmp below are fine)`;
}

import fs from "node:fs";

/**
 * How every package-manager configuration (npmrc, pip.conf, Go's env file) is
 * read: as data, and only when it is a small regular file. A link or a huge
 * file is not a config this reads.
 */
export function readSmall(file: string): string | null {
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > 64 * 1024) return null;
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * A URL without its user:password@ part, and whether it had one: an index's
 * credentials never enter the install sandbox (authenticated indexes are not
 * supported yet). Text that is no URL is returned as it is, for the caller's
 * own refusal to name.
 */
export function stripCredentials(raw: string): { url: string; dropped: boolean } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { url: raw, dropped: false };
  }
  if (u.username === "" && u.password === "") return { url: raw, dropped: false };
  u.username = "";
  u.password = "";
  return { url: u.toString(), dropped: true };
}

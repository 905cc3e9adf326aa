import fs from "node:fs";
import path from "node:path";

/** What a virtualenv says about itself: the Python it was made with, and where its packages are. */
export interface VenvFacts {
  /** "3.11" from pyvenv.cfg's `version`/`version_info`; null when it does not say */
  minor: string | null;
  /** relative to the venv: lib/python3.X/site-packages, when exactly one exists */
  sitePackages: string | null;
}

/**
 * Reads a venv as it is on the host. Its bin/python is a link to a host
 * interpreter (pyvenv.cfg `home`), which the sandbox does not have, so a run
 * never uses it: the image's own Python of the same minor version imports
 * from the venv's site-packages instead (sandbox/dependency-layer.ts).
 */
export function readVenv(venvDir: string): VenvFacts {
  let minor: string | null = null;
  try {
    const cfg = fs.readFileSync(path.join(venvDir, "pyvenv.cfg"), "utf8");
    const m = /^\s*version(?:_info)?\s*=\s*(\d+)\.(\d+)/m.exec(cfg);
    if (m) minor = `${m[1]}.${m[2]}`;
  } catch {
    // no pyvenv.cfg: the site-packages folder's name still says which Python it is for
  }
  let libs: string[] = [];
  try {
    libs = fs.readdirSync(path.join(venvDir, "lib")).filter((n) => /^python3\.\d+$/.test(n) && fs.existsSync(path.join(venvDir, "lib", n, "site-packages")));
  } catch {
    libs = [];
  }
  const sitePackages = libs.length === 1 ? `lib/${libs[0]}/site-packages` : null;
  if (minor === null && libs.length === 1) minor = libs[0]!.slice("python".length);
  return { minor, sitePackages };
}

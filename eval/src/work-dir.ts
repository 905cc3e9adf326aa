import fs from "node:fs";
import path from "node:path";
import { MiniAgentError } from "../../daemon/src/errors.js";

/**
 * Every path `eval run` or a fleet worker builds from a name it did not choose
 * (a job's case id, a case folder's name) must land under its work dir. A
 * forged case id of `../` steps once made a worker unpack and run a case at an
 * absolute path, so the check is on the RESOLVED path, links followed: a
 * lexical check alone passes `out/traces -> /etc` or a `..` behind a link.
 */
export function resolveInside(root: string, ...parts: string[]): string {
  const realRoot = fs.realpathSync(root);
  const target = path.resolve(realRoot, ...parts);
  const escaped = (where: string) =>
    new MiniAgentError(
      "path_escape",
      `${JSON.stringify(path.join(root, ...parts))} resolves to ${JSON.stringify(where)}, outside ${JSON.stringify(realRoot)}; nothing was written there`,
      {
        details: { root: realRoot, path: where },
      },
    );
  if (!isInside(target, realRoot)) throw escaped(target);
  // the deepest part that exists, with every link in it followed, must still be inside (what does not exist yet is made below it)
  for (let probe = target; ; probe = path.dirname(probe)) {
    let real: string;
    try {
      real = fs.realpathSync(probe);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && probe !== realRoot) continue;
      throw err;
    }
    if (!isInside(real, realRoot)) throw escaped(real);
    return target;
  }
}

function isInside(child: string, parent: string): boolean {
  const r = path.relative(parent, child);
  return r === "" || (r !== ".." && !r.startsWith(`..${path.sep}`) && !path.isAbsolute(r));
}

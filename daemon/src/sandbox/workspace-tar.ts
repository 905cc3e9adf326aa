import fs from "node:fs";
import path from "node:path";
import tar from "tar-fs";
import { MiniAgentError } from "../errors.js";

const SANDBOX_ID = 65534;

function checkDir(dir: string, what: string): string {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    throw new MiniAgentError("not_found", `${what} ${dir} does not exist`, { cause: err });
  }
  // the root itself must not be a symlink either: nothing outside it may be packed.
  if (!st.isDirectory()) throw new MiniAgentError("invalid_fields", `${what} ${dir} is not a directory (symlinks are not followed)`);
  return path.resolve(dir);
}

/**
 * The workspace as a tar stream for putArchive into /workspace. Symlinks are
 * packed as links (never followed out of the tree), sockets/fifos/devices are
 * skipped, `.git` is left out (hooks and objects never reach the sandbox), and
 * everything is owned by the sandbox user so tests can write their own files.
 * With `entries`, only those paths (see workspace-sync.ts).
 */
export function packWorkspace(dir: string, entries?: string[]): NodeJS.ReadableStream {
  const root = checkDir(dir, "workspace");
  return tar.pack(root, {
    // only these relative paths (a directory with everything in it); default: the whole tree
    ...(entries ? { entries } : {}),
    dereference: false,
    strict: false,
    sort: true,
    ignore: (abs: string) => path.relative(root, abs).split(path.sep).includes(".git"),
    map(header) {
      header.uid = SANDBOX_ID;
      header.gid = SANDBOX_ID;
      // owner can always read and write what it was given; nothing setuid/setgid/sticky
      const type = header.type === "directory" ? 0o700 : 0o600;
      header.mode = ((header.mode ?? 0) & 0o755) | type;
      return header;
    },
  } as tar.PackOptions) as unknown as NodeJS.ReadableStream;
}

/**
 * Control assets (hidden acceptance cases) for /control: owned by root with
 * no write bit anywhere, so the unprivileged sandbox user (no capabilities)
 * can read them but never change them.
 */
export function packControl(dir: string): NodeJS.ReadableStream {
  const root = checkDir(dir, "control dir");
  return tar.pack(root, {
    dereference: false,
    strict: false,
    sort: true,
    map(header) {
      header.uid = 0;
      header.gid = 0;
      header.mode = header.type === "directory" ? 0o555 : (header.mode ?? 0) & 0o111 ? 0o555 : 0o444;
      return header;
    },
  } as tar.PackOptions) as unknown as NodeJS.ReadableStream;
}

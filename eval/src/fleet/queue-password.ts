import fs from "node:fs";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import { parseQueueUrl, type QueueTarget } from "./queue-url.js";

/** The file system calls the password file needs; a test passes its own to reach what a real file cannot show. */
export interface PasswordFileFs {
  stat(file: string): { mode: number; isFile(): boolean };
  read(file: string): string;
}
const realFs: PasswordFileFs = { stat: (f) => fs.statSync(f), read: (f) => fs.readFileSync(f, "utf8") };

/**
 * `--queue-password-file FILE`: the queue's password from a file, so it is
 * not in `ps` (a `--queue redis://:PW@...` is in every process listing of
 * the machine). The first line, its line end stripped. Like ssh with a
 * private key, a file that group or others may read is refused: the password
 * would not be secret on this machine anyway. Messages name the file, never
 * its content.
 */
export function readQueuePasswordFile(file: string, fsx: PasswordFileFs = realFs): string {
  const bad = (why: string) => new MiniAgentError("queue_password_file_invalid", `--queue-password-file ${file}: ${why}`);
  let st;
  try {
    st = fsx.stat(file);
  } catch (err) {
    throw bad(`cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!st.isFile()) throw bad("is not a regular file");
  const loose = st.mode & 0o077;
  if (loose !== 0)
    throw bad(
      `its permissions ${(st.mode & 0o777).toString(8).padStart(4, "0")} are too open: group or others may read it; make it private (chmod 600 ${file})`,
    );
  let text: string;
  try {
    text = fsx.read(file);
  } catch (err) {
    throw bad(`cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const password = text.split(/\r?\n/, 1)[0] ?? "";
  if (password === "") throw bad("is empty (its first line is the password)");
  return password;
}

/**
 * The queue to use from `--queue URL` and an optional `--queue-password-file`.
 * A password in both places is refused rather than one silently winning.
 */
export function resolveQueueTarget(url: string, passwordFile: string | undefined, fsx: PasswordFileFs = realFs): QueueTarget {
  const target = parseQueueUrl(url);
  if (passwordFile === undefined) return target;
  if (target.password !== null)
    throw new MiniAgentError(
      "queue_url_invalid",
      `--queue ${target.display} holds a password and --queue-password-file gives one too; give it once, in the file, with --queue ${target.display.replace("***@", "")}`,
    );
  const password = readQueuePasswordFile(passwordFile, fsx);
  return { ...target, password, display: target.display.replace("://", "://***@") };
}

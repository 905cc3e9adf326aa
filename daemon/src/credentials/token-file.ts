import fs from "node:fs";
import { MiniAgentError } from "../errors.js";

/**
 * Reads the bearer token for the TCP listener. Same rules as credentials.json:
 * no symlink, not readable by group or others, long enough not to be guessed.
 */
export function readTokenFile(filePath: string, minLength: number): string {
  let fd: number;
  try {
    fd = fs.openSync(filePath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new MiniAgentError(code === "ELOOP" ? "credentials_insecure" : "credentials_missing", `cannot open token file ${filePath}: ${code ?? "error"}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new MiniAgentError("credentials_insecure", `token file ${filePath} is not a regular file`);
    if ((st.mode & 0o077) !== 0) {
      throw new MiniAgentError("credentials_insecure", `token file ${filePath} is readable by group or others; run: chmod 600 ${filePath}`);
    }
    const token = fs.readFileSync(fd, "utf8").trim();
    if (token.length < minLength || /\s/.test(token)) {
      throw new MiniAgentError("credentials_insecure", `token in ${filePath} must be at least ${minLength} characters without spaces`);
    }
    return token;
  } finally {
    fs.closeSync(fd);
  }
}

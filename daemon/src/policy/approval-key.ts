import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import { constants } from "node:fs";
import { MiniAgentError } from "../errors.js";

/**
 * The daemon-held HMAC key for approval records. It must survive a restart
 * (a resumed run re-checks its stored approvals), so it lives in the state dir
 * with mode 0600; it is created once and never rewritten.
 */
export async function loadOrCreateApprovalKey(file: string): Promise<Buffer> {
  try {
    const fh = await fs.open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(randomBytes(32).toString("hex") + "\n");
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new MiniAgentError("internal", "cannot create the approval key", { cause: err });
  }
  const fh = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const st = await fh.stat();
    if ((st.mode & 0o077) !== 0) throw new MiniAgentError("internal", "the approval key file must not be readable by group or others");
    const hex = (await fh.readFile("utf8")).trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new MiniAgentError("internal", "the approval key file is malformed");
    return Buffer.from(hex, "hex");
  } finally {
    await fh.close();
  }
}

import { execFile } from "node:child_process";
import os from "node:os";
import path from "node:path";

/**
 * Runs a command line we printed for the user, as the user would paste it: in
 * `sh`, from another folder, with only the README's set-up on the PATH (node,
 * the system's folders; no `npm link`, so no mini-agent bins), and no
 * MINI_AGENT_* variables. A printed command that only worked from the repo, or
 * with the bins linked, fails here.
 */
export function shellRun(commandLine: string, opts: { timeoutMs?: number; cwd?: string } = {}): Promise<{ code: number; output: string }> {
  const PATH = [path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter);
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      ["-c", commandLine],
      { cwd: opts.cwd ?? os.tmpdir(), env: { PATH, HOME: os.homedir() }, timeout: opts.timeoutMs ?? 300_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, output: `$ ${commandLine}\n${stdout}${stderr}` });
      },
    );
  });
}

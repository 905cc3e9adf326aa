import { spawn } from "node:child_process";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import type { Executor, SandboxSession } from "../sandbox/executor.js";

/**
 * A real host-process runner for unit tests of run_tests and the fixture
 * replays: it runs the command in the workspace with a minimal environment.
 * It is NOT a sandbox; tests use it only on the project's own fixture code.
 * Output beyond the cap is cut and reported as truncated, like the real executor.
 */
export function hostRunner(nodePath = process.execPath): Executor {
  const run = (req: Omit<SandboxRunRequest, "runId">): Promise<SandboxResult> =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const [cmd, ...args] = req.argv;
      const child = spawn(cmd === "node" ? nodePath : (cmd as string), args, {
        cwd: req.workspaceDir,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...(req.env ?? {}) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const cap = req.outputCapBytes ?? 1_048_576;
      let out: Buffer = Buffer.alloc(0);
      let err: Buffer = Buffer.alloc(0);
      let truncated = false;
      const take = (buf: Buffer, chunk: Buffer): Buffer => {
        const room = cap - out.length - err.length;
        if (chunk.length > room) truncated = true;
        return room > 0 ? Buffer.concat([buf, chunk.subarray(0, room)]) : buf;
      };
      child.stdout.on("data", (c: Buffer) => (out = take(out, c)));
      child.stderr.on("data", (c: Buffer) => (err = take(err, c)));
      let timedOut = false;
      let cancelled = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGKILL");
      }, req.timeoutMs);
      const onAbort = (): void => {
        cancelled = true;
        child.kill("SIGKILL");
      };
      req.signal?.addEventListener("abort", onAbort, { once: true });
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
        resolve({
          exit_code: code,
          timed_out: timedOut,
          cancelled,
          oom_killed: false,
          truncated,
          stdout: out.toString("utf8"),
          stderr: err.toString("utf8"),
          duration_ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
          image_digest: null,
          runtime: "host",
        });
      });
    });
  return {
    kind: "trusted_local",
    run: (req) => run(req),
    async openSession(): Promise<SandboxSession> {
      return { exec: (req) => run(req), close: async () => undefined };
    },
    describe: async () => ({ runtime: "host", imageDigest: null, engineVersion: null }),
  };
}

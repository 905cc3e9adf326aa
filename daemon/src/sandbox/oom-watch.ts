import type Docker from "dockerode";
import type { CommandOutcome } from "./exec-outcome.js";

/** after a kill signature, how long the engine's `oom` report may still take to arrive. */
const LATE_REPORT_MS = 1_000;
const LATE_REPORT_STEP_MS = 100;

/**
 * Did the kernel OOM-kill anything in a sandbox while one command ran?
 *
 * The spawner's reading of the sandbox's memory cgroup (`oomKills`) is the
 * kernel's own count and decides whenever it is there. Where it is not (gVisor
 * has no cgroupfs inside; no status came back), the engine is asked: its `oom`
 * events for the container, and State.OOMKilled (set only when the container's
 * main process died). The events are followed live from before the command
 * starts: the engine keeps only its last 256 events, so on a busy engine a
 * lookup after the command can find the report already gone (measured: after
 * 300 other events the lookup said no OOM while the cgroup counted 2 kills;
 * issue 10 item 8).
 */
export class OomWatch {
  private seen = false;
  private constructor(
    private readonly container: Docker.Container,
    private readonly stream: NodeJS.ReadableStream | null,
  ) {}

  /** Subscribes before the command is sent; an engine that refuses leaves only State.OOMKilled. */
  static async start(docker: Docker, container: Docker.Container): Promise<OomWatch> {
    let stream: NodeJS.ReadableStream | null = null;
    try {
      stream = (await docker.getEvents({ filters: { container: [container.id], event: ["oom"] } })) as NodeJS.ReadableStream;
    } catch {
      stream = null;
    }
    const watch = new OomWatch(container, stream);
    stream?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes('"oom"')) watch.seen = true;
    });
    stream?.on("error", () => undefined);
    return watch;
  }

  /** The verdict for the command that just ended; closes the subscription. Never throws. */
  async verdict(outcome: CommandOutcome): Promise<boolean> {
    try {
      if (outcome.oomKills !== null) return outcome.oomKills > 0;
      // A kill signature (no status, or SIGKILL) can arrive before the engine's report: wait for it briefly, only then.
      const killed = !outcome.timedOut && !outcome.cancelled && (outcome.exitCode === null || outcome.signal === 9 || outcome.exitCode === 137);
      for (let waited = 0; killed && !this.seen && waited < LATE_REPORT_MS; waited += LATE_REPORT_STEP_MS) {
        await new Promise((r) => setTimeout(r, LATE_REPORT_STEP_MS));
      }
      if (this.seen) return true;
      const info = await this.container.inspect().catch(() => null);
      return info?.State?.OOMKilled === true;
    } finally {
      this.close();
    }
  }

  close(): void {
    (this.stream as unknown as { destroy?: () => void } | null)?.destroy?.();
  }
}

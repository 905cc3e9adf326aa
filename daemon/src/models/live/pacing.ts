import type { MiniAgentError } from "../../errors.js";

/**
 * How fast the provider may be called again after a transient failure. The
 * runtime decides WHETHER to retry (at most twice, runtime/decide.ts); the
 * provider client decides WHEN, because only it knows the endpoint's
 * Retry-After. Exponential backoff, a server's Retry-After taking precedence,
 * both capped; a success resets it.
 */
export const PACING_DEFAULTS = {
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  /** a Retry-After beyond this is not waited out: the runtime's per-call cap would end the wait anyway */
  maxRetryAfterMs: 30_000,
} as const;

export interface PacingDeps {
  now: () => number;
  /** resolves after ms, or early when the signal aborts */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export const realPacingDeps: PacingDeps = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    }),
};

export class Pacing {
  private failures = 0;
  private notBefore = 0;

  constructor(private readonly deps: PacingDeps = realPacingDeps) {}

  /** Waits out the backoff owed from earlier transient failures (no wait otherwise). */
  async beforeRequest(signal: AbortSignal): Promise<void> {
    const wait = this.notBefore - this.deps.now();
    if (wait > 0) await this.deps.sleep(wait, signal);
  }

  succeeded(): void {
    this.failures = 0;
    this.notBefore = 0;
  }

  failed(err: MiniAgentError): void {
    if (err.details?.transient !== true) return;
    this.failures += 1;
    const retryAfter = typeof err.details.retry_after_ms === "number" ? Math.min(err.details.retry_after_ms, PACING_DEFAULTS.maxRetryAfterMs) : null;
    const backoff = Math.min(PACING_DEFAULTS.baseDelayMs * 2 ** (this.failures - 1), PACING_DEFAULTS.maxDelayMs);
    this.notBefore = this.deps.now() + (retryAfter ?? backoff);
  }
}

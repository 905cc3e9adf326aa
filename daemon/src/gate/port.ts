import type { Backend, Runtime } from "../contracts/sandbox.js";
import type { ImageFamily } from "../contracts/test-report.js";

export type GateVerdict =
  | { ok: true; generated_at?: string }
  | { ok: false; code: "isolation_unverified"; reason: string; message?: string; refresh_command: string };

/**
 * The isolation gate for `--model live` (issue 6). Called FIRST on create-run:
 * before the workspace is prepared, before the key is read, before any request.
 */
export interface LiveGate {
  /** `family`: the run's image family when the request names it (a task spec); absent: the configured one */
  check(input: { backend: Backend; family?: ImageFamily; runtime?: Runtime }): Promise<GateVerdict>;
}

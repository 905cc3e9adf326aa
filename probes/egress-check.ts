/**
 * The egress check's contract: what the host tells the check that runs INSIDE
 * an install sandbox (behind the install's forwarder: install-probes.ts), the
 * one line it prints, and the command that runs it in each install kind. The
 * images differ (the python image has no node, the go image neither node nor
 * python), so there is one source per kind (egress-check-sources.ts), each
 * written into the install's read-only tools folder; they only observe, and
 * the host judges (egress-judge.ts). What they print is container output: it
 * is parsed here, and a missing or malformed line is a reason, never a crash.
 */
import { z } from "zod";
import { describeZodError } from "../daemon/src/contracts/common.js";
import { GO_BUILD_ENV, IN_INSTALL, type InstallKind } from "../daemon/src/sandbox/install-tools.js";
import { EGRESS_CHECK_GO, EGRESS_CHECK_JS, EGRESS_CHECK_PY } from "./egress-check-sources.js";

export interface EgressCheckParams {
  /** the port of the host's allowed server on ITS 127.0.0.1 */
  hostPort: number;
  nonce: string;
}

export { UNLISTED_NAME } from "./egress-check-sources.js";

/** The proxy's HTTP status, or what came back instead (an error code, the first bytes of a non-HTTP answer). */
const Status = z.union([z.int(), z.string().max(200)]);

export const EgressCheckOutput = z.strictObject({
  allowed: z.strictObject({ status: Status, body_is_nonce: z.boolean() }),
  refused: z.strictObject({ connect: Status, get: Status }),
  /** target -> "connected" or the error code */
  direct: z.record(z.string(), z.string().max(200)),
});
export type EgressCheckOutput = z.infer<typeof EgressCheckOutput>;

export type EgressCheckResult = { ok: true; output: EgressCheckOutput } | { ok: false; reason: string };

/** The check's last printed line, read against the contract. */
export function parseEgressCheck(stdout: string): EgressCheckResult {
  const line = stdout.trim().split("\n").pop()?.trim() ?? "";
  if (line === "") return { ok: false, reason: "the egress check printed no line" };
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { ok: false, reason: `the egress check's last line is not JSON: ${JSON.stringify(line.slice(0, 120))}` };
  }
  const parsed = EgressCheckOutput.safeParse(json);
  if (!parsed.success) return { ok: false, reason: `the egress check's line is not its contract's shape: ${describeZodError(parsed.error)}` };
  return { ok: true, output: parsed.data };
}

/** Each kind's check: its file in the tools folder (written by the probe) and its text. */
export const EGRESS_CHECK_FILE: Record<InstallKind, { file: string; source: string }> = {
  npm: { file: "egress-check.cjs", source: EGRESS_CHECK_JS },
  pip: { file: "egress-check.py", source: EGRESS_CHECK_PY },
  go: { file: "egress-check.go", source: EGRESS_CHECK_GO },
};

/**
 * The command that runs a kind's check under the image's own language (the forwarder's argv goes
 * before it): node, python (-I: no PYTHONPATH, no user site), or Go's compiler into the exec /tmp
 * of the go family, as the Go forwarder itself is built (install-tools.ts).
 */
export function egressCheckArgv(kind: InstallKind, params: EgressCheckParams): string[] {
  const file = `${IN_INSTALL.tools}/${EGRESS_CHECK_FILE[kind].file}`;
  const arg = JSON.stringify(params);
  switch (kind) {
    case "npm":
      return ["/usr/bin/node", file, arg];
    case "pip":
      return ["/usr/bin/python3", "-I", file, arg];
    case "go":
      return [
        `${IN_INSTALL.tools}/bin/sh`,
        "-c",
        `${GO_BUILD_ENV} go build -o /tmp/mini-agent-egress-check ${file} || exit 127\nexec /tmp/mini-agent-egress-check "$@"`,
        "egress-check",
        arg,
      ];
  }
}

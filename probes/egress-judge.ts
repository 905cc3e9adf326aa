import type { EgressEvent } from "../daemon/src/egress/index.js";
import type { EgressCheckResult } from "./egress-check.js";
import { UNLISTED_NAME } from "./egress-check.js";
import { p } from "./inside-run.js";
import type { ProbeResult } from "./types.js";

/** What the host saw while the egress check ran: its server, the proxy's dialler, events and log. */
export interface EgressFacts {
  /** host:port of the one allowed server */
  allowedTarget: string;
  /** the requests the allowed server answered */
  serverSeen: readonly string[];
  /** every connection the proxy's dialler made */
  dialled: readonly string[];
  events: readonly EgressEvent[];
  /** how many "egress refused" lines the proxy logged for the unlisted name */
  refusedLogged: number;
}

/**
 * The three egress probes of an install sandbox, judged by the host from the check's parsed line
 * (egress-check.ts) and what the host itself saw. A check that printed nothing usable fails all
 * three, with its reason, exit code and stderr as what was observed.
 */
export function judgeEgress(check: EgressCheckResult, ran: { exitCode: number | null; stderr: string }, facts: EgressFacts): ProbeResult[] {
  const out = check.ok ? check.output : null;
  const failed = check.ok ? null : { reason: check.reason, exit_code: ran.exitCode, stderr: ran.stderr.slice(0, 500) };
  const want = [`CONNECT ${UNLISTED_NAME}:443`, `GET ${UNLISTED_NAME}:80`];
  const refusals = facts.events.filter((e) => e.verdict === "refused").map((e) => `${e.method} ${e.host}:${e.port}`);
  const direct = out ? Object.values(out.direct) : [];
  return [
    p(
      "egress_allowed",
      "through the proxy, the install sandbox reaches the one host on its allowlist",
      `GET http://${facts.allowedTarget}/ answered 200 with the nonce; the host's server saw it`,
      { check: out?.allowed ?? failed, server_saw: facts.serverSeen },
      out?.allowed.status === 200 && out.allowed.body_is_nonce && facts.serverSeen.length === 1,
      "anything beyond this host and port (the refusals below)",
    ),
    p(
      "egress_refused",
      "a name not on the allowlist is refused by the proxy with 403, logged, and never dialled nor looked up",
      { connect: 403, get: 403, refusals: want, logged: 2, dialled: [facts.allowedTarget] },
      { check: out?.refused ?? failed, refusals, logged: facts.refusedLogged, dialled: facts.dialled },
      out?.refused.connect === 403 &&
        out.refused.get === 403 &&
        JSON.stringify(refusals) === JSON.stringify(want) &&
        facts.refusedLogged === 2 &&
        JSON.stringify(facts.dialled) === JSON.stringify([facts.allowedTarget]),
      "what a listed registry serves (the install's own lock files decide that)",
    ),
    p(
      "egress_direct",
      "a direct connection to any address, the host's included, fails in the kernel: the proxy is the only way out",
      "every connect fails (ENETUNREACH off the loopback; nothing of the host's on the sandbox's own 127.0.0.1)",
      out?.direct ?? failed,
      direct.length >= 3 && direct.every((v) => v !== "connected"),
      "other protocols than TCP (no interface or route exists for them either: network_interfaces)",
    ),
  ];
}

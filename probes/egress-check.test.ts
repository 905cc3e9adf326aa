import { describe, expect, it } from "vitest";
import { IN_INSTALL } from "../daemon/src/sandbox/install-tools.js";
import { EGRESS_CHECK_FILE, egressCheckArgv, parseEgressCheck, UNLISTED_NAME } from "./egress-check.js";
import { type EgressFacts, judgeEgress } from "./egress-judge.js";

const GOOD = {
  allowed: { status: 200, body_is_nonce: true },
  refused: { connect: 403, get: 403 },
  direct: { "192.0.2.1:80": "ENETUNREACH", "172.17.0.1:4000": "ENETUNREACH", "127.0.0.1:4000": "ECONNREFUSED" },
};
const line = (o: unknown) => `some install noise\n${JSON.stringify(o)}\n`;
const FACTS: EgressFacts = {
  allowedTarget: "127.0.0.1:4000",
  serverSeen: ["GET /egress-probe"],
  dialled: ["127.0.0.1:4000"],
  events: [
    { verdict: "allowed", host: "127.0.0.1", port: 4000, method: "GET" },
    { verdict: "refused", host: UNLISTED_NAME, port: 443, method: "CONNECT" },
    { verdict: "refused", host: UNLISTED_NAME, port: 80, method: "GET" },
  ],
  refusedLogged: 2,
};
const verdicts = (rs: ReturnType<typeof judgeEgress>) => Object.fromEntries(rs.map((r) => [r.id, r.passed]));
const ran = { exitCode: 0, stderr: "" };

describe("the egress check's contract (egress-check.ts)", () => {
  it("reads its last line into the one output shape", () => {
    expect(parseEgressCheck(line(GOOD))).toEqual({ ok: true, output: GOOD });
  });

  it("a missing line, a line that is not JSON and a line of another shape are reasons, never a throw", () => {
    expect(parseEgressCheck("")).toEqual({ ok: false, reason: "the egress check printed no line" });
    expect(parseEgressCheck("Traceback (most recent call last):\n  boom\n")).toMatchObject({ ok: false, reason: expect.stringMatching(/not JSON/) });
    const noDirect = parseEgressCheck(line({ allowed: GOOD.allowed, refused: GOOD.refused }));
    expect(noDirect).toMatchObject({ ok: false, reason: expect.stringMatching(/contract's shape.*direct/s) });
    const extra = parseEgressCheck(line({ ...GOOD, verdict: "pass" }));
    expect(extra).toMatchObject({ ok: false, reason: expect.stringMatching(/verdict/) });
    expect(parseEgressCheck(line({ ...GOOD, allowed: { status: 200, body_is_nonce: "yes" } }))).toMatchObject({ ok: false });
  });

  it("each kind runs its own source from the tools folder under the image's own language", () => {
    const params = { hostPort: 4000, nonce: "n1" };
    expect(egressCheckArgv("npm", params)).toEqual(["/usr/bin/node", `${IN_INSTALL.tools}/egress-check.cjs`, JSON.stringify(params)]);
    expect(egressCheckArgv("pip", params)).toEqual(["/usr/bin/python3", "-I", `${IN_INSTALL.tools}/egress-check.py`, JSON.stringify(params)]);
    const go = egressCheckArgv("go", params);
    // the go image has no node and no python: the check is compiled there, in GOPATH mode, into the exec /tmp
    expect(go[0]).toBe(`${IN_INSTALL.tools}/bin/sh`);
    expect(go[2]).toMatch(new RegExp(`GO111MODULE=off .*go build -o /tmp/mini-agent-egress-check ${IN_INSTALL.tools}/egress-check.go`));
    expect(go.slice(3)).toEqual(["egress-check", JSON.stringify(params)]);
    expect(EGRESS_CHECK_FILE.pip.source).toMatch(/^import /);
    expect(EGRESS_CHECK_FILE.go.source).toMatch(/^package main/);
    for (const { source } of Object.values(EGRESS_CHECK_FILE)) expect(source).toContain(`CONNECT ${UNLISTED_NAME}:443`);
  });
});

describe("the egress probes can fail (egress-judge.ts)", () => {
  it("pass when the check and the host saw exactly the allowlist at work", () => {
    expect(verdicts(judgeEgress(parseEgressCheck(line(GOOD)), ran, FACTS))).toEqual({ egress_allowed: true, egress_refused: true, egress_direct: true });
  });

  it("a direct connection that got through fails egress_direct", () => {
    const leaky = { ...GOOD, direct: { ...GOOD.direct, "172.17.0.1:4000": "connected" } };
    expect(verdicts(judgeEgress(parseEgressCheck(line(leaky)), ran, FACTS)).egress_direct).toBe(false);
    // fewer than the three targets proves nothing about the missing ones
    expect(verdicts(judgeEgress(parseEgressCheck(line({ ...GOOD, direct: { "192.0.2.1:80": "ENETUNREACH" } })), ran, FACTS)).egress_direct).toBe(false);
  });

  it("an unlisted name the proxy let through or dialled fails egress_refused; an allowed host refused fails egress_allowed", () => {
    const through = { ...GOOD, refused: { connect: 200, get: 403 } };
    expect(verdicts(judgeEgress(parseEgressCheck(line(through)), ran, FACTS)).egress_refused).toBe(false);
    const dialled = { ...FACTS, dialled: ["127.0.0.1:4000", `${UNLISTED_NAME}:443`] };
    expect(verdicts(judgeEgress(parseEgressCheck(line(GOOD)), ran, dialled)).egress_refused).toBe(false);
    const notLogged = { ...FACTS, refusedLogged: 1 };
    expect(verdicts(judgeEgress(parseEgressCheck(line(GOOD)), ran, notLogged)).egress_refused).toBe(false);
    const refusedAllowed = { ...GOOD, allowed: { status: 403, body_is_nonce: false } };
    expect(verdicts(judgeEgress(parseEgressCheck(line(refusedAllowed)), ran, { ...FACTS, serverSeen: [] })).egress_allowed).toBe(false);
  });

  it("a check that printed nothing usable fails all three, with its reason, exit code and stderr as observed", () => {
    const rs = judgeEgress(parseEgressCheck(""), { exitCode: 127, stderr: "exec /usr/bin/node: No such file or directory" }, FACTS);
    expect(verdicts(rs)).toEqual({ egress_allowed: false, egress_refused: false, egress_direct: false });
    expect(rs.find((r) => r.id === "egress_direct")!.observed).toEqual({
      reason: "the egress check printed no line",
      exit_code: 127,
      stderr: "exec /usr/bin/node: No such file or directory",
    });
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keyId, writeReport } from "../../probes/report-store.js";
import { REPORT_SCHEMA_VERSION, type IsolationReport } from "../../probes/types.js";
import { statePath } from "../../daemon/src/config/state-dir.js";
import type { IsolationKey } from "../../daemon/src/gate/isolation-facts.js";
import { checkLiveGate } from "../../daemon/src/gate/live-gate.js";
import { readIsolationReportSummary } from "../../daemon/src/gate/probe-report.js";

const KEY: IsolationKey = {
  image_family: "node",
  image_digest: `sha256:${"c".repeat(64)}`,
  host_config_hash: `sha256:${"d".repeat(64)}`,
  engine_version: "20.10.24",
  runtime: "runc",
};
const AT = "2026-11-30T00:00:00.000Z";

function report(probes: Array<[string, boolean]>, over: Partial<IsolationReport> = {}): IsolationReport {
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    available: true,
    ...KEY,
    generated_at: AT,
    nonce: "n",
    probes: probes.map(([id, passed]) => ({ id, property: id, expected: true, observed: passed, passed, does_not_prove: "-" })),
    passed: probes.every(([, p]) => p),
    ...over,
  };
}

describe("reading the probes' stored report for the gate", () => {
  let state: string;
  beforeEach(() => {
    state = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-probe-report-"));
  });
  afterEach(() => fs.rmSync(state, { recursive: true, force: true }));

  it("a passing report is a pass; none is null", async () => {
    expect(await readIsolationReportSummary(state, KEY)).toBeNull();
    await writeReport(
      state,
      report([
        ["uid.nonroot", true],
        ["caps.bounding_zero", true],
      ]),
    );
    expect(await readIsolationReportSummary(state, KEY)).toEqual({ passed: true, generated_at: AT, failed_probe_ids: [] });
  });

  it("regression: a failing report names its failed probes, so the gate says probe_failed:<id> and not report_stale", async () => {
    await writeReport(
      state,
      report([
        ["uid.nonroot", true],
        ["net.no_interfaces", false],
        ["caps.bounding_zero", false],
      ]),
    );
    expect(await readIsolationReportSummary(state, KEY)).toEqual({
      passed: false,
      generated_at: AT,
      failed_probe_ids: ["net.no_interfaces", "caps.bounding_zero"],
    });
    const verdict = await checkLiveGate({
      backend: "container",
      facts: { currentKey: async () => ({ ok: true, key: KEY }), latestReport: (k) => readIsolationReportSummary(state, k) },
      clock: () => Date.parse(AT),
    });
    expect(verdict).toMatchObject({ ok: false, reason: "probe_failed:net.no_interfaces" });
  });

  it("a report claiming to pass with no probes is not a pass; a corrupt file or another key is no report", async () => {
    await writeReport(state, report([], { passed: true }));
    expect(await readIsolationReportSummary(state, KEY)).toMatchObject({ passed: false, failed_probe_ids: ["report_incomplete"] });
    fs.writeFileSync(path.join(statePath(state, "reports"), `${keyId(KEY)}.json`), "{not json");
    expect(await readIsolationReportSummary(state, KEY)).toBeNull();
    expect(await readIsolationReportSummary(state, { ...KEY, runtime: "runsc" })).toBeNull();
  });
});

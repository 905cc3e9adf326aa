import { describe, expect, it } from "vitest";
import type { IsolationFacts, IsolationKey, IsolationReportSummary } from "./isolation-facts.js";
import { checkLiveGate } from "./live-gate.js";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const FRESH = new Date(NOW - 3_600_000).toISOString();

/** one pinned image and HostConfig per family, as the real facts derive them from the lock and families.ts */
function keyOf(family: string): IsolationKey {
  const h = { node: "1", python: "2", go: "3" }[family] ?? "f";
  return {
    image_family: family,
    image_digest: `sha256:${h.repeat(64)}`,
    host_config_hash: `sha256:${h}${"0".repeat(63)}`,
    engine_version: "20.10.24",
    runtime: "runc",
  };
}

/** hand-built facts: the configured family is node; reports are found by their exact key */
function facts(reports: Record<string, IsolationReportSummary>, answerFor?: (family: string | undefined) => string) {
  const asked: Array<string | undefined> = [];
  const f: IsolationFacts = {
    async currentKey(family) {
      asked.push(family);
      return { ok: true, key: keyOf(answerFor ? answerFor(family) : (family ?? "node")) };
    },
    async latestReport(key) {
      const found = Object.values(reports).length ? reports[key.image_family] : undefined;
      // a report counts only for exactly its own key
      return found && JSON.stringify(keyOf(key.image_family)) === JSON.stringify(key) ? found : null;
    },
  };
  return { f, asked };
}

const pass: IsolationReportSummary = { passed: true, generated_at: FRESH, failed_probe_ids: [] };
const fail = (id: string): IsolationReportSummary => ({ passed: false, generated_at: FRESH, failed_probe_ids: [id] });

describe("the live gate per image family", () => {
  it("refuses a live run in the python image when only the node report passes (regression: one family's report unlocking another family's sandbox)", async () => {
    const { f, asked } = facts({ node: pass });
    const v = await checkLiveGate({ backend: "container", facts: f, family: "python", clock: () => NOW });
    expect(v).toMatchObject({ ok: false, code: "isolation_unverified", reason: "report_stale" });
    if (!v.ok) expect(v.message).toContain("python");
    expect(asked).toEqual(["python"]);
  });

  it("lets each family through on its own passing report, and names the failed probe of a family whose report failed", async () => {
    const { f } = facts({ node: pass, python: pass, go: fail("tmp_mount") });
    expect(await checkLiveGate({ backend: "container", facts: f, family: "python", clock: () => NOW })).toMatchObject({ ok: true, key: keyOf("python") });
    expect(await checkLiveGate({ backend: "container", facts: f, family: "node", clock: () => NOW })).toMatchObject({ ok: true, key: keyOf("node") });
    expect(await checkLiveGate({ backend: "container", facts: f, family: "go", clock: () => NOW })).toMatchObject({
      ok: false,
      reason: "probe_failed:tmp_mount",
    });
  });

  it("without a family checks the configured one", async () => {
    const { f, asked } = facts({ node: pass });
    expect(await checkLiveGate({ backend: "container", facts: f, clock: () => NOW })).toMatchObject({ ok: true, key: keyOf("node") });
    expect(asked).toEqual([undefined]);
  });

  it("fails closed when the facts answer with another family's key", async () => {
    const { f } = facts({ node: pass, python: pass }, () => "node");
    expect(await checkLiveGate({ backend: "container", facts: f, family: "python", clock: () => NOW })).toMatchObject({ ok: false, reason: "image_missing" });
  });
});

import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readLatestPassingReport, writeReport } from "./report-store.js";
import { REPORT_SCHEMA_VERSION, type IsolationKey, type IsolationReport } from "./types.js";

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-reports-"));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const key: IsolationKey = {
  image_family: "node",
  image_digest: "sha256:" + "1".repeat(64),
  host_config_hash: "sha256:" + "2".repeat(64),
  engine_version: "20.10.24",
  runtime: "runc",
};
const probe = (passed: boolean) => ({ id: "uid_gid", property: "p", expected: 1, observed: 1, passed, does_not_prove: "x" });
function report(passed: boolean, at: string, k: IsolationKey = key): IsolationReport {
  return { schema_version: REPORT_SCHEMA_VERSION, available: true, ...k, generated_at: at, nonce: "n", probes: [probe(passed)], passed };
}

describe("isolation report store", () => {
  it("returns the passing report for exactly its key, with generated_at", async () => {
    await writeReport(dir, report(true, "2026-11-30T00:00:00.000Z"));
    expect((await readLatestPassingReport(dir, key))?.generated_at).toBe("2026-11-30T00:00:00.000Z");
    expect(await readLatestPassingReport(dir, { ...key, runtime: "runsc" })).toBeNull();
    expect(await readLatestPassingReport(dir, { ...key, engine_version: "24.0.0" })).toBeNull();
    // a live run in another family's image is not proven by this family's report
    expect(await readLatestPassingReport(dir, { ...key, image_family: "python" })).toBeNull();
  });

  it("a newer failing report hides an older pass (regression: a stale pass unlocking the live model)", async () => {
    await writeReport(dir, report(true, "2026-11-30T00:00:00.000Z"));
    await writeReport(dir, report(false, "2026-11-30T01:00:00.000Z"));
    expect(await readLatestPassingReport(dir, key)).toBeNull();
  });

  it("a report claiming passed with a failed probe is not accepted", async () => {
    const r = report(false, "2026-11-30T00:00:00.000Z");
    await writeReport(dir, { ...r, passed: true });
    expect(await readLatestPassingReport(dir, key)).toBeNull();
  });

  it("a corrupt report file is treated as no report", async () => {
    const file = await writeReport(dir, report(true, "2026-11-30T00:00:00.000Z"));
    await fs.writeFile(file, "{not json");
    expect(await readLatestPassingReport(dir, key)).toBeNull();
  });
});

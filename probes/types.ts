import { z } from "zod";
import { Runtime } from "../daemon/src/contracts/sandbox.js";

export const ProbeResult = z.strictObject({
  id: z.string(),
  property: z.string(),
  expected: z.unknown(),
  observed: z.unknown(),
  passed: z.boolean(),
  does_not_prove: z.string(),
});
export type ProbeResult = z.infer<typeof ProbeResult>;

/** What the in-container program prints: bound to the nonce the host chose. */
export const InsideOutput = z.strictObject({ nonce: z.string(), probes: z.array(ProbeResult).min(1) });

export const IsolationKey = z.strictObject({
  /** the image family (node, python, go): a live run in one family needs a report of that family */
  image_family: z.string(),
  image_digest: z.string(),
  host_config_hash: z.string(),
  engine_version: z.string(),
  runtime: Runtime,
});
export type IsolationKey = z.infer<typeof IsolationKey>;

/** 2: reports name their image family (issue 11); a version-1 report proves nothing for the gate now. */
export const REPORT_SCHEMA_VERSION = 2;

export const IsolationReport = z.strictObject({
  schema_version: z.literal(REPORT_SCHEMA_VERSION),
  available: z.literal(true),
  engine_version: z.string(),
  runtime: Runtime,
  image_family: z.string(),
  image_digest: z.string(),
  host_config_hash: z.string(),
  generated_at: z.string(),
  nonce: z.string(),
  probes: z.array(ProbeResult),
  passed: z.boolean(),
});
export type IsolationReport = z.infer<typeof IsolationReport>;

/** With no reachable engine there is nothing to prove and no fallback to the host. */
export interface UnavailableReport {
  schema_version: typeof REPORT_SCHEMA_VERSION;
  available: false;
  isolation_passed: false;
  reason: "runtime_unavailable";
  runtime: Runtime;
  image_family: string;
  generated_at: string;
  passed: false;
}

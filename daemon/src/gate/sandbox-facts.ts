import type Docker from "dockerode";
import { isMiniAgentError } from "../errors.js";
import type { Runtime } from "../contracts/sandbox.js";
import type { SandboxConfig } from "../sandbox/config.js";
import { isolationKeyFor } from "../../../probes/report-store.js";
import { resolvePinnedImage } from "../sandbox/image-pin.js";
import type { CurrentKeyResult, IsolationFacts, IsolationKey, IsolationReportSummary } from "./isolation-facts.js";

export interface SandboxFactsOptions {
  docker: Docker;
  /** the configured sandbox (its family is the default one) */
  sandbox: SandboxConfig;
  /**
   * The sandbox config of another image family, made exactly as that family's executor
   * makes it (the same overrides plus `imageFamily`), so its HostConfig hash is the one
   * its probes ran with. Absent: only the configured family has a sandbox.
   */
  sandboxFor?: (family: string, runtime?: Runtime) => SandboxConfig;
  /** statePath(stateDir, "imageLock") */
  lockPath: string;
  /** the probes' report store: the latest report (passing or not) stored for exactly this key */
  readReport: (key: IsolationKey) => Promise<IsolationReportSummary | null>;
}

/**
 * The gate's facts from the real engine: the engine answers, the configured
 * runtime is registered, the pinned digest is present (sandbox/image-pin.ts),
 * and the key is built from the same HostConfig hash the executor and the
 * probes use. No container is started.
 */
export function sandboxIsolationFacts(opts: SandboxFactsOptions): IsolationFacts {
  return {
    async currentKey(family?: string, runtime?: Runtime): Promise<CurrentKeyResult> {
      let sandbox = opts.sandbox;
      const otherRuntime = runtime !== undefined && runtime !== opts.sandbox.runtime;
      if ((family !== undefined && family !== opts.sandbox.imageFamily) || otherRuntime) {
        const name = family ?? opts.sandbox.imageFamily;
        if (!opts.sandboxFor) return { ok: false, reason: "image_missing", detail: `no sandbox is configured for the image family ${name}` };
        try {
          sandbox = opts.sandboxFor(name, runtime);
        } catch (err) {
          return { ok: false, reason: "image_missing", detail: isMiniAgentError(err) ? err.message : `no sandbox for the image family ${family}` };
        }
      }
      let engineVersion: string;
      let runtimes: Record<string, unknown>;
      try {
        const [version, info] = await Promise.all([opts.docker.version(), opts.docker.info() as Promise<{ Runtimes?: Record<string, unknown> }>]);
        engineVersion = version.Version;
        runtimes = info.Runtimes ?? {};
      } catch {
        return { ok: false, reason: "runtime_unavailable", detail: "no Docker engine is reachable; run `npm run docker:ensure`" };
      }
      if (!(sandbox.runtime in runtimes)) {
        return { ok: false, reason: "runtime_unavailable", detail: `the OCI runtime ${sandbox.runtime} is not registered with the engine` };
      }
      let digest: string;
      try {
        digest = await resolvePinnedImage(opts.docker, sandbox, opts.lockPath);
      } catch (err) {
        if (isMiniAgentError(err, "image_missing") || isMiniAgentError(err, "image_digest_mismatch")) {
          return { ok: false, reason: "image_missing", detail: err.message };
        }
        return { ok: false, reason: "runtime_unavailable", detail: "the engine could not be asked for the pinned image" };
      }
      return {
        ok: true,
        key: isolationKeyFor(sandbox, digest, engineVersion),
      };
    },
    latestReport: (key) => opts.readReport(key),
  };
}

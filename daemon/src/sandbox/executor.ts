import type { DependencyLayerRef, ExportSpec, SandboxResult, SandboxRunRequest, Runtime } from "../contracts/sandbox.js";

/**
 * Runs one command against a copy of a workspace. The container implementation
 * lives in sandbox/docker-executor.ts; `trusted_local` (host processes) is for the
 * built-in replay only and never for a live model.
 */
export interface Executor {
  readonly kind: "container" | "trusted_local";
  /** A FRESH sandbox for this one command (verifier, acceptance, probes). */
  run(req: SandboxRunRequest): Promise<SandboxResult>;
  /** A warm sandbox kept for one agent run: workspace synced in before each exec; `layers` mounted read-only. */
  openSession(runId: string, layers?: readonly DependencyLayerRef[]): Promise<SandboxSession>;
  /**
   * The workspace's dependency folders as read-only layers, built when missing
   * (sandbox/dependency-layer.ts); called once when a run is created. A backend
   * without sandboxes has none (absent: []).
   */
  prepareLayers?(workspaceRoot: string, spec: ExportSpec): Promise<DependencyLayerRef[]>;
  /**
   * The programs the run's image can start by name (sandbox/image-programs.ts), read when a run is
   * created: the policy offers and runs only those (policy/image-programs.ts). Absent: no image.
   */
  programs?(): Promise<readonly string[]>;
  describe(): Promise<{ runtime: Runtime | "host"; imageDigest: string | null; engineVersion: string | null }>;
  /**
   * What a run on this backend needs, checked when the run is created and
   * before anything exists (issue 10 item 6); throws a MiniAgentError that says
   * how to fix it (runtime_unavailable, image_missing, image_digest_mismatch).
   */
  preflight(): Promise<void>;
}

export interface SandboxSession {
  exec(req: Omit<SandboxRunRequest, "runId">): Promise<SandboxResult>;
  close(): Promise<void>;
}

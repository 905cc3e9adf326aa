/**
 * What the host tells the in-container probe (probes/inside/probe.c), and the one
 * place its argv is written. Plain flags, not JSON: the probe is a static C program
 * that must not need a parser, a runtime or anything else from the image.
 */
export interface InsideProbeArgs {
  nonce: string;
  runtime: string;
  /** names the sandbox environment may hold */
  allowedEnv: string[];
  /** sha256 (hex) of the host's canary secret, so the secret itself never enters the sandbox */
  canarySha256: string;
  canaryName: string;
  canaryFileName: string;
  hostStateDir: string;
  /** whether /tmp must be noexec (false only for a family with an exec /tmp: daemon/src/sandbox/families.ts) */
  tmpNoexec: boolean;
}

export function insideProbeArgv(probe: readonly string[], a: InsideProbeArgs): string[] {
  return [
    ...probe,
    "--nonce",
    a.nonce,
    "--runtime",
    a.runtime,
    ...a.allowedEnv.flatMap((n) => ["--allow-env", n]),
    "--canary-sha256",
    a.canarySha256,
    "--canary-name",
    a.canaryName,
    "--canary-file",
    a.canaryFileName,
    "--host-state-dir",
    a.hostStateDir,
    "--tmp-noexec",
    a.tmpNoexec ? "1" : "0",
  ];
}

import { MiniAgentError } from "../errors.js";
import type { ImageFamily } from "../contracts/test-report.js";
import type { ChecksDeps } from "./ports.js";

/**
 * The live gate's verdict, required before ANY check touches a sandbox: a check
 * runs code the caller did not review (another agent's work), so it gets the
 * same proof a live model does. Refused with the reason and the probe command;
 * there is no host fallback.
 */
export async function requireProvenSandbox(deps: Pick<ChecksDeps, "gate">, family: ImageFamily): Promise<void> {
  const v = await deps.gate(family);
  if (v.ok) return;
  const why = v.message ? `: ${v.message}` : "";
  const refresh = family === "node" ? v.refresh_command : `${v.refresh_command} --family ${family}`;
  throw new MiniAgentError(
    "isolation_unverified",
    `sandbox refused: isolation unverified for the ${family} family (${v.reason})${why}; refresh with: ${refresh}`,
    {
      details: { reason: v.reason, refresh_command: refresh, family },
    },
  );
}

import type { EffectivePolicy } from "../contracts/policy.js";
import type { PolicyDecision } from "./classify.js";

/**
 * The command policy meets the run's image. The built-in allowlist names checks for every
 * family (`ruff check` for images that have ruff); a run's image has only some of those
 * programs, so an entry naming one it lacks is never offered (the allowlist a model is told,
 * `policy show` of the run, the ci/eval hint), and a command naming a program the image does
 * not have is refused with the programs it does have, instead of running into exit 127.
 * The image's programs are read from the pinned image itself (sandbox/image-programs.ts).
 */

/** The run's policy for its image: allow entries whose program the image lacks are left out; the programs are kept for the check below. */
export function policyForImage(policy: EffectivePolicy, family: string, programs: readonly string[] | null): EffectivePolicy {
  if (programs === null) return policy;
  const has = new Set(programs);
  return {
    ...policy,
    command_allow: policy.command_allow.filter((shape) => !isProgramName(shape[0]) || has.has(shape[0]!)),
    image: { family, programs: [...programs] },
  };
}

/**
 * The refusal for a command whose program is not in the run's image, or null. A program named by
 * a path (`node_modules/.bin/jest`, `./gradlew`) is the workspace's or the image's own file: the
 * sandbox answers for it.
 */
export function programMissing(policy: EffectivePolicy, argv: readonly string[]): PolicyDecision | null {
  const program = argv[0];
  if (policy.image === undefined || !isProgramName(program) || policy.image.programs.includes(program!)) return null;
  const { family, programs } = policy.image;
  return {
    verdict: "deny",
    code: "program_missing",
    reason: `${program} is not in the ${family} image, so nothing ran; the programs it has: ${programs.join(", ") || "(none)"}. A project's own tools run by their workspace path (node_modules/.bin/NAME)`,
    rule: `image:${family}`,
  };
}

/** a bare program name (looked up on PATH), not a path and not an argv placeholder such as `<path>` */
function isProgramName(word: string | undefined): boolean {
  return word !== undefined && word.length > 0 && !word.includes("/") && !word.startsWith("<");
}

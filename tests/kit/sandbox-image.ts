import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { pinFamilyImage } from "../../sandbox-image/pin-image.js";
import type { ImageFamily } from "../../sandbox-image/definitions.js";

/**
 * Pins the sandbox image of `family` in a test's own lock file and returns it.
 *
 * The test command (scripts/test.sh) builds the images once with `npm run
 * image:build` and names that lock in MINI_AGENT_TEST_IMAGE_LOCK; a test file
 * then copies the entry (after checking the engine has the image) instead of
 * assembling and sending the ~100 MB root filesystem again. Run directly
 * (`npx vitest …`), or when the shared lock lacks the family or the engine lost
 * the image, the file builds it itself through the same builder.
 */
export async function pinTestImage(
  lockPath: string,
  family: ImageFamily = "node",
  docker: Docker = createDockerClient(process.env),
): Promise<{ tag: string; digest: string }> {
  fs.mkdirSync(path.dirname(lockPath), { recursive: true, mode: 0o700 });
  return pinFamilyImage(docker, lockPath, family, process.env.MINI_AGENT_TEST_IMAGE_LOCK ?? null);
}

import type Docker from "dockerode";
import { readImageLock, recordImage } from "../daemon/src/sandbox/image-lock.js";
import type { ImageFamily } from "./definitions.js";
import { buildFamily } from "./image-builder.js";

/**
 * Pins the sandbox image of `family` in `lockPath` and returns it: the entry of
 * an already-built lock (`sourceLock`, e.g. the one `npm run image:build`
 * wrote) when the engine still has that image, else a fresh build through the
 * one builder. Tests and benches use it so they never send the ~100 MB root
 * filesystem again when the image is there.
 */
export async function pinFamilyImage(
  docker: Docker,
  lockPath: string,
  family: ImageFamily,
  sourceLock: string | null,
  onBuild: (family: ImageFamily) => void = () => {},
): Promise<{ tag: string; digest: string }> {
  if (sourceLock) {
    const entry = (await readImageLock(sourceLock))?.images[family];
    const present = entry
      ? await docker
          .getImage(entry.digest)
          .inspect()
          .then(
            () => true,
            () => false,
          )
      : false;
    if (entry && present) {
      await recordImage(lockPath, family, entry);
      return { tag: entry.tag, digest: entry.digest };
    }
  }
  onBuild(family);
  const built = await buildFamily(docker, family);
  await recordImage(lockPath, family, { tag: built.tag, digest: built.digest, built_at: new Date().toISOString() });
  return { tag: built.tag, digest: built.digest };
}

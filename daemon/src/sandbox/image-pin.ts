import type Docker from "dockerode";
import { MiniAgentError } from "../errors.js";
import type { SandboxConfig } from "./config.js";
import { isBuiltinFamily } from "../contracts/sandbox.js";
import { knownFamilies, unknownFamily } from "./families.js";
import { readImageLock, rebuildHint } from "./image-lock.js";
import { PROTOCOL_LABEL, SANDBOX_PROTOCOL } from "./labels.js";

function statusOf(err: unknown): number | undefined {
  return (err as { statusCode?: number })?.statusCode;
}

/** Turns "engine not reachable" into runtime_unavailable; never falls back to the host. */
export function engineError(err: unknown): MiniAgentError {
  if (err instanceof MiniAgentError) return err;
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT" || code === "ECONNREFUSED" || code === "EACCES" || code === "ECONNRESET") {
    return new MiniAgentError("runtime_unavailable", "no Docker engine is reachable; run `npm run docker:ensure`", { cause: err });
  }
  return new MiniAgentError("sandbox_error", `Docker engine error: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/**
 * The digest to run: the one recorded in the lock when the image was built,
 * present in the engine, and (when a tag is configured) the one the tag
 * resolves to. The image is never referenced by tag when a container is made.
 */
export async function resolvePinnedImage(docker: Docker, config: SandboxConfig, lockPath: string): Promise<string> {
  const lock = await readImageLock(lockPath);
  const entry = lock?.images[config.imageFamily];
  // a name that is neither built in nor a custom family of this lock is the user's typo: usage, not a rebuild
  if (!entry && !isBuiltinFamily(config.imageFamily)) throw unknownFamily(config.imageFamily, knownFamilies(lock));
  if (!entry) {
    throw new MiniAgentError(
      "image_missing",
      `no pinned sandbox image for family "${config.imageFamily}" in ${lockPath}; ${rebuildHint(lockPath, config.imageFamily)}`,
    );
  }
  let labels: Record<string, string> | null | undefined;
  try {
    labels = (await docker.getImage(entry.digest).inspect()).Config?.Labels;
  } catch (err) {
    if (statusOf(err) === 404) {
      throw new MiniAgentError("image_missing", `the pinned sandbox image ${entry.digest} is not in the engine; ${rebuildHint(lockPath, config.imageFamily)}`, {
        cause: err,
      });
    }
    throw engineError(err);
  }
  const protocol = labels?.[PROTOCOL_LABEL];
  if (protocol !== SANDBOX_PROTOCOL) {
    throw new MiniAgentError(
      "image_missing",
      `the pinned sandbox image ${entry.digest} was built ${protocol === undefined ? "by an older mini-agent (no sandbox protocol)" : `for sandbox protocol ${protocol}`}; this one speaks protocol ${SANDBOX_PROTOCOL}: ${rebuildHint(lockPath, config.imageFamily)}`,
      { details: { pinned: entry.digest, image_protocol: protocol ?? null, protocol: SANDBOX_PROTOCOL } },
    );
  }
  if (config.imageTag) {
    let tagged: string;
    try {
      tagged = (await docker.getImage(config.imageTag).inspect()).Id;
    } catch (err) {
      if (statusOf(err) === 404) {
        throw new MiniAgentError("image_missing", `the configured image tag ${config.imageTag} does not exist; ${rebuildHint(lockPath, config.imageFamily)}`, {
          cause: err,
        });
      }
      throw engineError(err);
    }
    if (tagged !== entry.digest) {
      throw new MiniAgentError(
        "image_digest_mismatch",
        `image tag ${config.imageTag} resolves to ${tagged}, but the pinned digest is ${entry.digest}; ${rebuildHint(lockPath, config.imageFamily)}`,
        { details: { tag: config.imageTag, tagged, pinned: entry.digest } },
      );
    }
  }
  return entry.digest;
}

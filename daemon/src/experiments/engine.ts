import fs from "node:fs/promises";
import path from "node:path";
import { isMiniAgentError, MiniAgentError } from "../errors.js";
import type { ImageFamily } from "../contracts/test-report.js";
import { IMAGE_FAMILIES, isBuiltinFamily, type Runtime } from "../contracts/sandbox.js";
import { unknownFamily } from "../sandbox/families.js";
import { createDockerClient } from "../sandbox/docker-client.js";
import { DockerExecutor } from "../sandbox/docker-executor.js";
import { recordImage } from "../sandbox/image-lock.js";
import { buildFamily } from "../../../sandbox-image/image-builder.js";
import type { EngineFacts } from "./types.js";

export interface EngineSetup {
  executor: DockerExecutor | null;
  facts: EngineFacts;
  lockPath: string | null;
  /** the executor of another image family, its image built and pinned in the same lock on first use */
  familyExecutor: (family: ImageFamily) => Promise<DockerExecutor>;
}

/**
 * The report's own pinned image: built (content-addressed, so a rebuild of the
 * same definition is the same digest) and recorded in a lock inside the report's
 * scratch dir, so the operator's state dir is never touched. No reachable engine
 * is a fact to report (available=false, reason=runtime_unavailable), not a crash.
 */
export async function setUpEngine(scratch: string, env: NodeJS.ProcessEnv, runtime: Runtime): Promise<EngineSetup> {
  const docker = createDockerClient(env);
  const noEngine = async (): Promise<DockerExecutor> => {
    throw new MiniAgentError("runtime_unavailable", "no sandbox engine is reachable");
  };
  const unavailable = (reason: string): EngineSetup => ({
    executor: null,
    lockPath: null,
    facts: { available: false, reason, runtime, image_digest: null, engine_version: null },
    familyExecutor: noEngine,
  });
  try {
    await docker.ping();
  } catch {
    return unavailable("runtime_unavailable");
  }
  try {
    const built = await buildFamily(docker, "node");
    const lockPath = path.join(scratch, "sandbox-image.lock.json");
    await fs.mkdir(scratch, { recursive: true });
    // a fixed timestamp: the lock lives in scratch and nothing canonical reads it
    await recordImage(lockPath, "node", { tag: built.tag, digest: built.digest, built_at: "1970-01-01T00:00:00.000Z" });
    const executor = new DockerExecutor({ lockPath, docker, config: { runtime } });
    const d = await executor.describe();
    // built only when a scenario asks (group 1's python and go fixtures), so the other groups never wait for them
    const families = new Map<ImageFamily, Promise<DockerExecutor>>([["node", Promise.resolve(executor)]]);
    const familyExecutor = (family: ImageFamily): Promise<DockerExecutor> => {
      let made = families.get(family);
      if (!made) {
        made = (async () => {
          // experiments build the family's image themselves: only a built-in one has a recipe
          if (!isBuiltinFamily(family)) throw unknownFamily(family, IMAGE_FAMILIES);
          const image = await buildFamily(docker, family);
          await recordImage(lockPath, family, { tag: image.tag, digest: image.digest, built_at: "1970-01-01T00:00:00.000Z" });
          return new DockerExecutor({ lockPath, docker, config: { runtime, imageFamily: family } });
        })();
        families.set(family, made);
      }
      return made;
    };
    return {
      executor,
      lockPath,
      facts: { available: true, reason: null, runtime: d.runtime, image_digest: d.imageDigest, engine_version: d.engineVersion },
      familyExecutor,
    };
  } catch (err) {
    return unavailable(isMiniAgentError(err) ? err.code : "sandbox_error");
  }
}

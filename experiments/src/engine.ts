import fs from "node:fs/promises";
import path from "node:path";
import { isMiniAgentError, MiniAgentError } from "../../daemon/src/errors.js";
import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import { IMAGE_FAMILIES, isBuiltinFamily, type Runtime } from "../../daemon/src/contracts/sandbox.js";
import { unknownFamily } from "../../daemon/src/sandbox/families.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { pinFamilyImage } from "../../sandbox-image/pin-image.js";
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
 * scratch dir, so the operator's state dir is never touched. With `sourceLock`
 * (`--image-lock`, a lock `npm run image:build` wrote), a family the engine still
 * has under that lock's digest is pinned from it instead of built again: the go
 * family's build alone takes minutes. No reachable engine is a fact to report
 * (available=false, reason=runtime_unavailable), not a crash.
 */
export async function setUpEngine(scratch: string, env: NodeJS.ProcessEnv, runtime: Runtime, sourceLock: string | null = null): Promise<EngineSetup> {
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
    const lockPath = path.join(scratch, "sandbox-image.lock.json");
    await fs.mkdir(scratch, { recursive: true });
    await pinFamilyImage(docker, lockPath, "node", sourceLock);
    const executor = new DockerExecutor({ lockPath, docker, config: { runtime } });
    const d = await executor.describe();
    // built only when a scenario asks (group 1's python and go fixtures), so the other groups never wait for them
    const families = new Map<ImageFamily, Promise<DockerExecutor>>([["node", Promise.resolve(executor)]]);
    const familyExecutor = (family: ImageFamily): Promise<DockerExecutor> => {
      let made = families.get(family);
      if (!made) {
        made = (async () => {
          // experiments pin a built-in family's image (a custom one has no recipe to rebuild it from)
          if (!isBuiltinFamily(family)) throw unknownFamily(family, IMAGE_FAMILIES);
          await pinFamilyImage(docker, lockPath, family, sourceLock);
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

import crypto from "node:crypto";
import type Docker from "dockerode";
import tarStream from "tar-stream";
import type { SandboxConfig } from "./config.js";
import { containerSpec } from "./host-config.js";
import { engineError } from "./image-pin.js";
import { CUSTOM_BASE_LABEL, PROGRAMS_LABEL, sandboxLabels } from "./labels.js";

/** Where a PATH is unset in the image's env, what the spawner's exec falls back to. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The programs an image can start by name: every entry (file or link) directly in a folder
 * of the image's PATH, sorted. A built-in family's image carries them as a label its build
 * wrote from the root filesystem it sent; any other image (a custom family, one built before
 * the label) is read by the engine from a created, never started container (nothing of the
 * image runs). A PATH folder the image lacks has no programs.
 */
export async function readImagePrograms(docker: Docker, config: SandboxConfig, digest: string): Promise<string[]> {
  let c: Docker.Container | undefined;
  try {
    const image = (await docker.getImage(digest).inspect()).Config;
    const labels = image?.Labels ?? {};
    // a built-in family's build recorded them; a custom family's Dockerfile may have added some
    if (labels[PROGRAMS_LABEL] !== undefined && labels[CUSTOM_BASE_LABEL] === undefined) return labels[PROGRAMS_LABEL].split(",").filter(Boolean).sort();
    const env = image?.Env ?? [];
    const pathVar = env.find((e) => e.startsWith("PATH="))?.slice("PATH=".length) ?? DEFAULT_PATH;
    const spec = containerSpec(config, digest, sandboxLabels("image-programs", "image_read", config.instance), false);
    c = await docker.createContainer({ ...spec, name: `mini-agent-image-programs-${crypto.randomBytes(6).toString("hex")}` });
    const programs = new Set<string>();
    for (const dir of new Set(pathVar.split(":").filter((d) => d.startsWith("/")))) {
      let tar: NodeJS.ReadableStream;
      try {
        tar = (await c.getArchive({ path: dir })) as NodeJS.ReadableStream;
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) continue;
        throw err;
      }
      for (const name of await topLevelEntries(tar)) programs.add(name);
    }
    return [...programs].sort();
  } catch (err) {
    throw engineError(err);
  } finally {
    await c?.remove({ force: true, v: true }).catch(() => undefined);
  }
}

/** Names of the non-folder entries directly inside the archive's one top folder (`bin/node` -> `node`). */
function topLevelEntries(tar: NodeJS.ReadableStream): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    const names: string[] = [];
    extract.on("entry", (header, stream, next) => {
      const parts = header.name.split("/").filter(Boolean);
      if (parts.length === 2 && header.type !== "directory") names.push(parts[1]!);
      stream.on("end", next);
      stream.resume();
    });
    extract.on("finish", () => resolve(names));
    extract.on("error", reject);
    tar.pipe(extract);
  });
}

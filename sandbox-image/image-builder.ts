import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type Docker from "dockerode";
import tar from "tar-fs";
import { CUSTOM_BASE_LABEL, PROGRAMS_LABEL, PROTOCOL_LABEL, SANDBOX_PROTOCOL } from "../daemon/src/sandbox/labels.js";
import { MiniAgentError } from "../daemon/src/errors.js";
import { IMAGE_DEFINITIONS, repoPath, type ImageDefinition, type ImageFamily } from "./definitions.js";
import { imageInputsKey, INPUTS_LABEL } from "./inputs-key.js";
import { assembleContext, pathPrograms, SANDBOX_UID } from "./rootfs.js";

/** Every entry of the context gets this mtime so identical inputs give identical layer bytes. */
const FIXED_MTIME = new Date(0);

export interface BuiltImage {
  family: string;
  tag: string;
  /** content digest (image ID); the only way the executor references the image. */
  digest: string;
  /** true when an earlier build from the same inputs was reused instead of building again */
  reused?: boolean;
}

/**
 * Tar stream of a build context with fixed owners, modes and mtimes. Root owns
 * everything except /workspace, which belongs to the sandbox user; /control
 * stays root-owned and read-only.
 */
export function packContext(contextDir: string): NodeJS.ReadableStream {
  return tar.pack(contextDir, {
    dereference: false,
    map(header) {
      header.mtime = FIXED_MTIME;
      header.uid = 0;
      header.gid = 0;
      if (header.name === "rootfs/workspace") {
        header.uid = SANDBOX_UID;
        header.gid = SANDBOX_UID;
        header.mode = 0o40700;
      }
      if (header.name === "rootfs/tmp") header.mode = 0o41777;
      if (header.name === "rootfs/control") header.mode = 0o40555;
      return header;
    },
  }) as unknown as NodeJS.ReadableStream;
}

/**
 * The host packages a family is assembled from, installed when missing (as root on
 * Debian) by scripts/toolchains-ensure.sh; a clear error otherwise. Families without
 * host packages (node) never run it.
 */
export async function ensureHostPackages(def: ImageDefinition): Promise<void> {
  const packages = def.hostPackages ?? [];
  if (packages.length === 0) return;
  try {
    await promisify(execFile)("bash", [repoPath("scripts/toolchains-ensure.sh"), ...packages], { maxBuffer: 16 << 20 });
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? "")
      .trim()
      .split("\n")
      .slice(-3)
      .join("; ");
    throw new MiniAgentError(
      "sandbox_error",
      `image family ${def.family} needs the host packages ${packages.join(", ")}: ${stderr || "toolchains-ensure.sh failed"}`,
      {
        cause: err,
      },
    );
  }
}

/** Assembles and builds one image definition through the Engine API (no CLI, no registry). */
export async function buildImageFromDefinition(
  docker: Docker,
  def: ImageDefinition,
  opts: { contextDir?: string; onProgress?: (line: string) => void; fresh?: boolean } = {},
): Promise<BuiltImage> {
  await ensureHostPackages(def);
  const inputs = `${def.family}:${await imageInputsKey(def)}`;
  if (!opts.fresh) {
    const reused = await builtFromSameInputs(docker, def, inputs);
    if (reused) {
      return reused;
    }
  }
  // A private context per build: two builds at once (test files, a user's build next to a
  // daemon's) must not empty each other's root filesystem half-way. The tar has fixed
  // mtimes and relative names, so where the context sits changes no byte of the image.
  const contextDir = opts.contextDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), `mini-agent-image-${def.family}-`)));
  try {
    return await buildInContext(docker, def, contextDir, inputs, opts.onProgress);
  } finally {
    if (opts.contextDir === undefined) await fs.rm(contextDir, { recursive: true, force: true });
  }
}

/**
 * The image an earlier build made from exactly these inputs (imageInputsKey), tagged again as the
 * family's tag; null when the engine has none. It is the image a new build would make, and it is
 * still pinned by its content digest like any other.
 */
async function builtFromSameInputs(docker: Docker, def: ImageDefinition, inputs: string): Promise<BuiltImage | null> {
  const found: Docker.ImageInfo[] = await docker.listImages({ filters: JSON.stringify({ label: [`${INPUTS_LABEL}=${inputs}`] }) });
  // a custom family built FROM this image inherits its labels, the inputs one too: it is not this build
  const image = found.find((i) => i.Labels?.[PROTOCOL_LABEL] === SANDBOX_PROTOCOL && i.Labels?.[CUSTOM_BASE_LABEL] === undefined);
  if (!image) return null;
  const [repo, tag] = def.tag.split(":") as [string, string];
  await docker.getImage(image.Id).tag({ repo, tag });
  return { family: def.family, tag: def.tag, digest: image.Id, reused: true };
}

async function buildInContext(
  docker: Docker,
  def: ImageDefinition,
  contextDir: string,
  inputs: string,
  onProgress?: (line: string) => void,
): Promise<BuiltImage> {
  await assembleContext(def, contextDir);
  const programs = await pathPrograms(path.join(contextDir, "rootfs"), def.env.PATH ?? "");
  const stream = await docker.buildImage(
    packContext(contextDir) as never,
    {
      t: def.tag,
      rm: true,
      forcerm: true,
      pull: "",
      nocache: false,
      // which daemon may run it (image-pin.ts refuses another protocol); a build parameter, so the Dockerfile stays plain
      // what its PATH holds, so the daemon's policy knows without reading ~100 MB of archive (sandbox/image-programs.ts),
      // and what it was made from, so a build with the same inputs reuses it (builtFromSameInputs)
      labels: JSON.stringify({ [PROTOCOL_LABEL]: SANDBOX_PROTOCOL, [PROGRAMS_LABEL]: programs.join(","), [INPUTS_LABEL]: inputs }),
    } as unknown as Docker.ImageBuildOptions,
  );
  const events = await new Promise<Array<Record<string, unknown>>>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, res: Array<Record<string, unknown>>) => (err ? reject(err) : resolve(res)),
      (ev: Record<string, unknown>) => {
        if (typeof ev.stream === "string" && ev.stream.trim()) onProgress?.(ev.stream.trim());
      },
    );
  });
  const failed = events.find((e) => e.error !== undefined || e.errorDetail !== undefined);
  if (failed) {
    throw new MiniAgentError("sandbox_error", `image build failed: ${String(failed.error ?? JSON.stringify(failed.errorDetail))}`);
  }
  // The build's own answer names the image it made; the tag may already point at
  // another build's image when two builds of one family ran at once.
  const built = events.map((e) => (e.aux as { ID?: unknown } | undefined)?.ID).find((id): id is string => typeof id === "string" && id.startsWith("sha256:"));
  const digest = built ?? (await docker.getImage(def.tag).inspect()).Id;
  return { family: def.family, tag: def.tag, digest };
}

export async function buildFamily(docker: Docker, family: ImageFamily, onProgress?: (line: string) => void, fresh = false): Promise<BuiltImage> {
  return buildImageFromDefinition(docker, IMAGE_DEFINITIONS[family], { onProgress, fresh });
}

/**
 * Builds the plain Node runtime base (`mini-agent/node-base:local`): the same
 * root filesystem as the sandbox image without the probe bits, for packaging
 * the daemon itself on top (`FROM mini-agent/node-base:local`).
 */
export async function buildNodeBaseImage(docker: Docker, onProgress?: (line: string) => void): Promise<BuiltImage> {
  return buildFamily(docker, "node-base", onProgress);
}

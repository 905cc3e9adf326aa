import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { pino, type Logger } from "pino";
import tarStream from "tar-stream";
import { z } from "zod";
import type { DependencyLayerRef, ExportSpec } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import {
  checkLayerSize,
  findDependencyDirs,
  INSTALL_INPUTS,
  installLookupKey,
  type InstalledDir,
  listLayerContent,
  readVenv,
  type DependencyDir,
  type LayerContent,
  type LayerStatIndex,
  type ListLayerOptions,
} from "../workspace/index.js";
import type { SandboxConfig } from "./config.js";
import { containerSpec, IN_IMAGE } from "./host-config.js";
import { engineError } from "./image-pin.js";
import { INSTANCE_LABEL, LAYER_FOLDER_LABEL, LAYER_LABEL, sandboxLabels } from "./labels.js";
import { LayerStatStore } from "./layer-stat-store.js";
import { packLayer } from "./layer-tar.js";
import { writeRecordFile } from "./record-file.js";

/**
 * Dependency layers (issue 25): a workspace's dependency folders enter its
 * sandboxes as read-only, content-addressed volumes, built once per key and
 * reused by every run, Verifier sandbox and eval case with that key, instead
 * of being copied into each sandbox's 128 MiB workspace tmpfs. A layer is
 * populated by the ENGINE extracting a tar (putArchive) into the volume
 * mounted in a helper container of the run's pinned image with the same
 * HostConfig, which is created and never started: nothing of the repository
 * runs, not even to install it. The record of a finished build (a file in the
 * state dir) is written last, so a volume without one (the daemon died while
 * building) is never used: it is removed and built again.
 */

/** What the daemon keeps of a built layer; read back through this schema. */
const LayerRecord = z.strictObject({
  schema_version: z.literal(1),
  key: z.string().regex(/^[a-f0-9]{64}$/),
  folder: z.enum(["node_modules", ".venv", "venv", "vendor"]),
  volume: z.string(),
  size_bytes: z.number().int().min(0),
  files: z.number().int().min(0),
  built_at: z.string(),
  build_ms: z.number().min(0),
  last_used_at: z.string(),
  /** a venv's Python minor version (pyvenv.cfg), checked against the run's image on every use */
  venv_minor: z.string().nullable().optional(),
  site_packages: z.string().optional(),
});
export type LayerRecord = z.infer<typeof LayerRecord>;

/** Which layer an install sandbox made for a workspace's package.json and lock files (installLookupKey), and with what command. */
const InstallRecord = z.strictObject({
  schema_version: z.literal(1),
  lookup: z.string().regex(/^[a-f0-9]{64}$/),
  key: z.string().regex(/^[a-f0-9]{64}$/),
  command: z.string(),
  installed_at: z.string(),
});
type InstallRecord = z.infer<typeof InstallRecord>;

export interface DependencyLayersOptions {
  docker: Docker;
  /** where build records are kept: statePath(stateDir, "layers") */
  dir: string;
  /** the daemon's instance: on every layer volume, and in its name (gc only ever sees its own) */
  instance: string | null;
  /** wall clock (ms since the epoch), for built/last-used times and the stat index's racily-clean line */
  now?: () => number;
  log?: Logger;
  /** reads and hashes one file of a dependency folder (default: workspace's hashNoFollow); a test counts the reads */
  hashFile?: ListLayerOptions["hashFile"];
}

/** PYTHONPATH for the venv layers among `layers` (absent: none has site-packages). */
export function layerEnv(layers: readonly DependencyLayerRef[] | undefined): Record<string, string> {
  const paths = (layers ?? []).filter((l) => l.site_packages).map((l) => `${IN_IMAGE.workspace}/${l.folder}/${l.site_packages}`);
  // the image's own python imports from the venv's site-packages: the venv's bin/python links to a host interpreter
  return paths.length > 0 ? { PYTHONPATH: paths.join(":") } : {};
}

/** Adds layerEnv to an exec's `NAME=value` list, replacing a name it already holds. */
export function withLayerEnv(env: string[], layers: readonly DependencyLayerRef[] | undefined): string[] {
  const extra = layerEnv(layers);
  const names = new Set(Object.keys(extra));
  if (names.size === 0) return env;
  return [...env.filter((e) => !names.has(e.slice(0, e.indexOf("=")))), ...Object.entries(extra).map(([k, v]) => `${k}=${v}`)];
}

export class DependencyLayers {
  private readonly docker: Docker;
  private readonly dir: string;
  private readonly instance: string;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly hashFile: ListLayerOptions["hashFile"];
  /** per workspace and folder, what its files' stamps were when they were hashed (layer-stat-store.ts) */
  private readonly statIndexes: LayerStatStore;
  /** one build per key at a time: two runs asking at once share it */
  private readonly building = new Map<string, Promise<LayerRecord>>();
  private readonly pythonOf = new Map<string, Promise<string | null>>();

  constructor(opts: DependencyLayersOptions) {
    this.docker = opts.docker;
    this.dir = opts.dir;
    this.instance = opts.instance ?? "0".repeat(16);
    this.now = opts.now ?? (() => Date.now());
    this.log = opts.log ?? pino({ level: "silent" });
    this.hashFile = opts.hashFile;
    this.statIndexes = new LayerStatStore(this.dir, this.log);
  }

  /**
   * The layers of `workspace`'s dependency folders, built when missing, for a run
   * whose sandboxes use `config` and the image `digest`. A venv made with another
   * Python minor version than the image's is refused (invalid_workspace) before
   * anything is built.
   */
  async ensure(workspace: string, spec: ExportSpec, config: SandboxConfig, digest: string): Promise<DependencyLayerRef[]> {
    const refs: DependencyLayerRef[] = [];
    for (const folder of findDependencyDirs(workspace)) {
      const venv = folder === ".venv" || folder === "venv" ? readVenv(path.join(workspace, folder)) : null;
      if (venv?.minor) {
        const image = await this.imagePython(config, digest);
        if (image !== null && image !== venv.minor) {
          throw new MiniAgentError(
            "invalid_workspace",
            `${folder} was made with Python ${venv.minor}, but the ${config.imageFamily} image runs Python ${image}; make it with python${image} -m venv ${folder}, or remove it`,
            { details: { folder, venv_python: venv.minor, image_python: image } },
          );
        }
      }
      // before a byte of it is hashed or copied: the figure and the limit
      await checkLayerSize(path.join(workspace, folder), folder);
      const { content, record: found } = await this.keyFolder(workspace, folder, spec);
      let record = found;
      if (record) {
        record = { ...record, last_used_at: new Date(this.now()).toISOString() };
        this.write(record);
        this.log.info({ layer: content.key, folder, volume: record.volume }, "dependency layer reused");
      } else {
        record = await this.buildOnce(content, venv?.minor ?? null, venv?.sitePackages ?? null, config, digest);
      }
      refs.push({ folder, key: record.key, volume: record.volume, ...(record.site_packages && { site_packages: record.site_packages }) });
    }
    // a folder not on disk: the layer an install sandbox made from this workspace's package.json and lock,
    // requirements or go.mod (env build)
    for (const folder of Object.keys(INSTALL_INPUTS) as InstalledDir[]) {
      if (refs.some((r) => r.folder === folder || (folder === ".venv" && r.folder === "venv"))) continue;
      const installed = await this.installedFor(workspace, folder, digest);
      if (installed)
        refs.push({
          folder: installed.folder,
          key: installed.key,
          volume: installed.volume,
          ...(installed.site_packages && { site_packages: installed.site_packages }),
        });
    }
    return refs;
  }

  /**
   * The content key of a found dependency folder and its usable layer record, if any. Files the stat index
   * vouches for are not read (layer-stat-index.ts); the index is written back whenever this listing differs.
   */
  private async keyFolder(workspace: string, folder: DependencyDir, spec: ExportSpec): Promise<{ content: LayerContent; record: LayerRecord | null }> {
    const list = (index: LayerStatIndex | null) =>
      listLayerContent(workspace, folder, spec, { index, now: this.now, ...(this.hashFile && { hashFile: this.hashFile }) });
    const usable = async (key: string) => {
      const r = this.read(key);
      return r && (await this.volumeExists(r.volume)) ? r : null;
    };
    let content = await list(this.statIndexes.read(workspace, folder));
    let record = await usable(content.key);
    // a layer is built only from bytes read now: a key taken from the index names what the files held when
    // they were indexed, and a wrong index must never give a volume that name with other bytes in it
    if (!record && content.fromIndex > 0) {
      const indexed = content.key;
      content = await list(null);
      record = await usable(content.key);
      if (content.key !== indexed) this.log.warn({ folder, indexed, key: content.key }, "stat index of a dependency folder named other bytes; hashed whole");
    }
    if (!content.unchanged) this.statIndexes.write(content.index);
    this.log.info({ folder, layer: content.key, files_from_index: content.fromIndex, files_read: content.hashed }, "dependency folder keyed");
    return { content, record };
  }

  /**
   * Makes the folder an install sandbox produced (copied out under
   * `resultRoot`, with the workspace's lock files beside it) the layer of
   * every workspace with the same install inputs (INSTALL_INPUTS) and image:
   * built by the same rule and key as one found on disk.
   */
  async adoptInstalled(
    resultRoot: string,
    folder: InstalledDir,
    workspace: string,
    spec: ExportSpec,
    config: SandboxConfig,
    digest: string,
    command: string,
  ): Promise<LayerRecord> {
    const lookup = await installLookupKey(workspace, digest, folder);
    if (lookup === null)
      throw new MiniAgentError("invalid_workspace", `an install of ${folder} needs one of ${INSTALL_INPUTS[folder].needs.join(", ")} at the workspace's root`, {
        details: { workspace, folder },
      });
    await checkLayerSize(path.join(resultRoot, folder), folder);
    // a venv the install made with the image's python: its site-packages goes on PYTHONPATH as a found one's does
    const venv = folder === ".venv" ? readVenv(path.join(resultRoot, folder)) : null;
    const content = await listLayerContent(resultRoot, folder, spec);
    let record = this.read(content.key);
    if (record && !(await this.volumeExists(record.volume))) record = null;
    record ??= await this.buildOnce(content, venv?.minor ?? null, venv?.sitePackages ?? null, config, digest);
    const at = new Date(this.now()).toISOString();
    writeRecordFile(this.dir, this.installPath(lookup), { schema_version: 1, lookup, key: record.key, command, installed_at: at } satisfies InstallRecord);
    this.log.info({ layer: record.key, lookup, command }, "installed dependency layer recorded");
    return record;
  }

  /**
   * The installed layer recorded for this workspace's package.json, lock files and image; null when none
   * was installed for them, refused when one was and its record or volume is gone.
   */
  private async installedFor(workspace: string, folder: InstalledDir, digest: string): Promise<LayerRecord | null> {
    const lookup = await installLookupKey(workspace, digest, folder);
    if (lookup === null) return null;
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(this.installPath(lookup), "utf8"));
    } catch {
      return null;
    }
    const parsed = InstallRecord.safeParse(raw);
    if (!parsed.success || parsed.data.lookup !== lookup) return null;
    const record = this.read(parsed.data.key);
    // an install was made for exactly these inputs and its layer is gone (env gc, or removed from the engine):
    // said now, before anything of the run exists, where going on without it failed late on a missing module
    if (!record || !(await this.volumeExists(record.volume)))
      throw new MiniAgentError(
        "sandbox_error",
        `this workspace's ${folder} was installed with ${JSON.stringify(parsed.data.command)} (env build), but that dependency layer is gone (env gc, or removed from the engine); install it again: mini-agent-client env build --workspace ${JSON.stringify(workspace)} --install ${JSON.stringify(parsed.data.command)} (or this run's --install)`,
        { details: { folder, layer: parsed.data.key, command: parsed.data.command } },
      );
    const used = { ...record, last_used_at: new Date(this.now()).toISOString() };
    this.write(used);
    this.log.info({ layer: record.key, lookup }, "installed dependency layer reused");
    return used;
  }

  private installPath(lookup: string): string {
    return path.join(this.dir, `install-${lookup}.json`);
  }

  /** Refuses to start a sandbox whose layer volume is gone: the engine would silently mount a new, empty one. */
  async check(layers: readonly DependencyLayerRef[]): Promise<void> {
    for (const l of layers) {
      if (await this.volumeExists(l.volume)) continue;
      throw new MiniAgentError("sandbox_error", `the dependency layer of ${l.folder} (${l.volume}) no longer exists; start a new run to build it again`, {
        details: { layer: l.key, folder: l.folder },
      });
    }
  }

  /** Every layer this daemon built (newest use first), and whether the engine still has its volume. */
  async list(): Promise<Array<LayerRecord & { present: boolean }>> {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.dir).filter((n) => /^[a-f0-9]{64}\.json$/.test(n));
    } catch {
      names = [];
    }
    const out: Array<LayerRecord & { present: boolean }> = [];
    for (const n of names) {
      const r = this.read(n.slice(0, -5));
      if (r) out.push({ ...r, present: await this.volumeExists(r.volume) });
    }
    return out.sort((a, b) => (a.last_used_at < b.last_used_at ? 1 : a.last_used_at > b.last_used_at ? -1 : 0));
  }

  /** Removes a layer's volume, then its record and the stat indexes naming it; a volume the engine says is in use stays (sandbox_error). */
  async remove(key: string): Promise<void> {
    const r = this.read(key);
    if (!r) return;
    try {
      await this.docker.getVolume(r.volume).remove();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 404) {
        throw new MiniAgentError("sandbox_error", `the dependency layer ${key.slice(0, 12)} could not be removed (a sandbox may still use it)`, { cause: err });
      }
    }
    fs.rmSync(this.recordPath(key), { force: true });
    // an index naming a removed layer would only lead to reading the folder whole: it goes with the layer
    this.statIndexes.forget(key);
  }

  private recordPath(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  private read(key: string): LayerRecord | null {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(this.recordPath(key), "utf8"));
    } catch {
      return null;
    }
    const parsed = LayerRecord.safeParse(raw);
    return parsed.success && parsed.data.key === key ? parsed.data : null;
  }

  private write(r: LayerRecord): void {
    writeRecordFile(this.dir, this.recordPath(r.key), r);
  }

  private async volumeExists(name: string): Promise<boolean> {
    try {
      await this.docker.getVolume(name).inspect();
      return true;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return false;
      throw engineError(err);
    }
  }

  private buildOnce(content: LayerContent, venvMinor: string | null, sitePackages: string | null, config: SandboxConfig, digest: string): Promise<LayerRecord> {
    let p = this.building.get(content.key);
    if (!p) {
      p = this.build(content, venvMinor, sitePackages, config, digest).finally(() => this.building.delete(content.key));
      this.building.set(content.key, p);
    }
    return p;
  }

  private async build(
    content: LayerContent,
    venvMinor: string | null,
    sitePackages: string | null,
    config: SandboxConfig,
    digest: string,
  ): Promise<LayerRecord> {
    const t0 = this.now();
    const volume = `mini-agent-layer-${this.instance.slice(0, 16)}-${content.key.slice(0, 32)}`;
    // a volume of this name without a record is a build that never finished
    await this.docker
      .getVolume(volume)
      .remove()
      .catch(() => undefined);
    let helper: Docker.Container | undefined;
    try {
      await this.docker.createVolume({
        Name: volume,
        Driver: "local",
        Labels: { [LAYER_LABEL]: content.key, [LAYER_FOLDER_LABEL]: content.folder, [INSTANCE_LABEL]: this.instance },
      });
      const spec = containerSpec(config, digest, sandboxLabels(`layer-${content.key.slice(0, 12)}`, "layer_build", config.instance), false);
      spec.HostConfig = {
        ...spec.HostConfig,
        Mounts: [
          {
            Type: "volume",
            Source: volume,
            Target: IN_IMAGE.workspace,
            ReadOnly: false,
            VolumeOptions: { NoCopy: true } as Docker.MountSettings["VolumeOptions"],
          },
        ],
      };
      helper = await this.docker.createContainer({ ...spec, name: `mini-agent-layer-build-${crypto.randomBytes(6).toString("hex")}` });
      await helper.putArchive(packLayer(content.entries) as never, { path: IN_IMAGE.workspace, noOverwriteDirNonDir: "true" });
    } catch (err) {
      await helper?.remove({ force: true, v: true }).catch(() => undefined);
      await this.docker
        .getVolume(volume)
        .remove()
        .catch(() => undefined);
      if (err instanceof MiniAgentError) throw err;
      throw new MiniAgentError("sandbox_error", `the dependency layer of ${content.folder} could not be built: ${(err as Error)?.message ?? err}`, {
        cause: err,
      });
    }
    await helper.remove({ force: true, v: true }).catch(() => undefined);
    const at = new Date(this.now()).toISOString();
    const record: LayerRecord = {
      schema_version: 1,
      key: content.key,
      folder: content.folder,
      volume,
      size_bytes: content.bytes,
      files: content.entries.filter((e) => e.type === "file").length,
      built_at: at,
      build_ms: Math.max(0, this.now() - t0),
      last_used_at: at,
      ...(venvMinor !== null && { venv_minor: venvMinor }),
      ...(sitePackages !== null && { site_packages: sitePackages }),
    };
    this.write(record);
    this.log.info({ layer: content.key, folder: content.folder, volume, bytes: content.bytes, ms: record.build_ms }, "dependency layer built");
    return record;
  }

  /**
   * The image's Python minor version, from its /usr/bin/python3 link (python3.11),
   * read by the engine from a created, never started container; null without a python3.
   */
  private imagePython(config: SandboxConfig, digest: string): Promise<string | null> {
    let p = this.pythonOf.get(digest);
    if (!p) {
      p = this.readImagePython(config, digest);
      this.pythonOf.set(digest, p);
    }
    return p;
  }

  private async readImagePython(config: SandboxConfig, digest: string): Promise<string | null> {
    let c: Docker.Container | undefined;
    try {
      const spec = containerSpec(config, digest, sandboxLabels("layer-python", "layer_build", config.instance), false);
      c = await this.docker.createContainer({ ...spec, name: `mini-agent-layer-py-${crypto.randomBytes(6).toString("hex")}` });
      const tar = (await c.getArchive({ path: "/usr/bin/python3" })) as NodeJS.ReadableStream;
      const link = await firstLinkName(tar);
      const m = link ? /python(3\.\d+)$/.exec(link) : null;
      return m ? m[1]! : null;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return null;
      this.pythonOf.delete(digest);
      throw engineError(err);
    } finally {
      await c?.remove({ force: true, v: true }).catch(() => undefined);
    }
  }
}

function firstLinkName(tar: NodeJS.ReadableStream): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    let found: string | null = null;
    extract.on("entry", (header, stream, next) => {
      if (found === null && header.type === "symlink") found = header.linkname ?? null;
      stream.on("end", next);
      stream.resume();
    });
    extract.on("finish", () => resolve(found));
    extract.on("error", reject);
    tar.pipe(extract);
  });
}

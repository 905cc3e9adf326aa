import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { readImageLock } from "../../daemon/src/sandbox/image-lock.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { OWNER_FILTER, RUN_LABEL } from "../../daemon/src/sandbox/labels.js";

export const docker: Docker = createDockerClient(process.env);

/** A fresh state dir per test file, with the sandbox image built (cached by the engine) and pinned in it. */
export async function freshStateDir(): Promise<{ stateDir: string; lockPath: string; digest: string; tag: string }> {
  const stateDir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-sbx-state-"));
  const lockPath = statePath(stateDir, "imageLock");
  const built = await pinTestImage(lockPath, "node", docker);
  const lock = await readImageLock(lockPath);
  return { stateDir, lockPath, digest: lock!.images.node!.digest, tag: built.tag };
}

/** runsc only where the engine has it registered. */
export async function availableRuntimes(): Promise<Array<"runc" | "runsc">> {
  const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
  return info.Runtimes && "runsc" in info.Runtimes ? ["runc", "runsc"] : ["runc"];
}

/** Run ids are unique per test file so the leftover check only looks at this suite's sandboxes. */
export function runIdPrefix(name: string): string {
  return `t-${name}-${crypto.randomBytes(3).toString("hex")}`;
}

export async function workspace(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-sbx-ws-"));
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), content);
  }
  return dir;
}

/** Containers and volumes whose run label starts with the prefix (owner label required too). */
export async function leftoversWithPrefix(prefix: string): Promise<{ containers: string[]; volumes: string[] }> {
  const filters = { label: [OWNER_FILTER] };
  const containers = (await docker.listContainers({ all: true, filters })).filter((c) => (c.Labels[RUN_LABEL] ?? "").startsWith(prefix)).map((c) => c.Id);
  const volumes = ((await docker.listVolumes({ filters })).Volumes ?? []).filter((v) => (v.Labels?.[RUN_LABEL] ?? "").startsWith(prefix)).map((v) => v.Name);
  return { containers, volumes };
}

/** Clean-up of last resort for a failing test: only this suite's labelled objects. */
export async function removeWithPrefix(prefix: string): Promise<void> {
  const left = await leftoversWithPrefix(prefix);
  for (const id of left.containers)
    await docker
      .getContainer(id)
      .remove({ force: true })
      .catch(() => undefined);
  for (const v of left.volumes)
    await docker
      .getVolume(v)
      .remove({ force: true })
      .catch(() => undefined);
}

/** in-sandbox script: the argv[0] of every live process, sorted, as JSON. */
export const PROCESS_LIST =
  "const fs=require('fs');console.log(JSON.stringify(fs.readdirSync('/proc').filter(x=>/^\\d+$/.test(x)).map(p=>{try{return fs.readFileSync('/proc/'+p+'/cmdline','utf8').split('\\0')[0]}catch{return null}}).filter(x=>x!==null).sort()))";

/** what PROCESS_LIST shows in a warm sandbox with nothing left over: init, spawner, the node running it (commands come over the attach, no exec'd relay). */
export const ONLY_SANDBOX_PROCESSES = ["/opt/mini-agent/spawner", "/sbin/docker-init", "node"];

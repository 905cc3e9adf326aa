import crypto from "node:crypto";
import { canonicalJson } from "../workspace/hash.js";
import type { SandboxConfig } from "./config.js";
import { hostConfigTemplate, layerMount, SANDBOX_USER, tmpfsVolumeOptions } from "./host-config.js";
import { installKindFor, installMountShape, installSandboxConfig } from "./install-sandbox.js";

/**
 * The hash of every sandbox configuration a run of this config may use, which
 * keys the isolation report: the test sandbox's HostConfig and volumes, a
 * dependency layer's read-only mount (issue 25), and where there is an install
 * sandbox (installKindFor), the extra mounts of its own kind (npm, pip or Go). A change to any of them is a new key, so
 * the live gate asks for probes again; the probes prove each of them
 * (probes/run.ts, probes/layer-probes.ts, probes/install-probes.ts).
 * Its own file: the install sandbox's mounts live in install-sandbox.ts, which
 * itself builds on host-config.ts.
 */
export function hostConfigHash(config: SandboxConfig): string {
  const kind = installKindFor(config);
  const tmpl = {
    ...hostConfigTemplate(config),
    workspaceVolume: tmpfsVolumeOptions(config.workspaceBytes, "sandbox"),
    controlVolume: tmpfsVolumeOptions(config.controlBytes, "root"),
    user: SANDBOX_USER,
    // the shape, not a layer's volume name: one report covers every layer of that shape
    layerMount: layerMount({ folder: "node_modules", volume: "<layer volume>" }),
    // node's is npm's shape as it was when npm was the only install probed, so node's reports keep their key
    installMounts: kind === null ? null : installMountShape(kind),
    // the install sandbox's own memory limit, which its probes see in its HostConfig
    installMemory: kind === null ? null : installSandboxConfig(config).memoryBytes,
  };
  return "sha256:" + crypto.createHash("sha256").update(canonicalJson(tmpl)).digest("hex");
}

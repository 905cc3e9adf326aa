import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { resolveSandboxConfig } from "../daemon/src/sandbox/config.js";
import { hostConfigTemplate, SANDBOX_USER, tmpfsVolumeOptions } from "../daemon/src/sandbox/host-config.js";
import { type ExtraMount, inspectProbes } from "./host-probes.js";

const config = resolveSandboxConfig({});
const digest = `sha256:${"a".repeat(64)}`;
const layer: ExtraMount = { destination: "/workspace/node_modules", type: "volume", rw: false };

/** What the engine reports for a sandbox with a workspace volume of `workspaceBytes` and the given extra mounts. */
function inspected(mounts: Array<{ Type: string; Destination: string; RW: boolean; Name?: string }>, workspaceBytes = config.workspaceBytes) {
  const info = {
    Image: digest,
    Config: { User: SANDBOX_USER },
    NetworkSettings: { Networks: { none: {} } },
    HostConfig: { ...hostConfigTemplate(config) },
    Mounts: [{ Type: "volume", Name: "ws", Destination: "/workspace", RW: true }, ...mounts],
  } as unknown as Parameters<typeof inspectProbes>[0];
  const vols = [{ Name: "ws", Options: tmpfsVolumeOptions(workspaceBytes, "sandbox") }] as unknown as Docker.VolumeInspectInfo[];
  return { info, vols };
}

function failed(r: ReturnType<typeof inspectProbes>): string[] {
  return (r[0]!.observed as { failed: string[] }).failed;
}

describe("host inspection of a sandbox with extra mounts (a dependency layer, the install sandbox's)", () => {
  it("passes with exactly the expected mounts, read-only where they must be", () => {
    const { info, vols } = inspected([{ Type: "volume", Name: "layer", Destination: "/workspace/node_modules", RW: false }]);
    expect(failed(inspectProbes(info, config, digest, vols, [layer]))).toEqual([]);
  });

  // Regression: the inspection accepted only the workspace and control volumes, so a layer-mounted sandbox
  // could not be proven, and nothing checked that the layer is mounted read-only.
  it("fails for a layer mounted writable, a missing or unexpected extra mount, and a changed workspace size", () => {
    const rw = inspected([{ Type: "volume", Name: "layer", Destination: "/workspace/node_modules", RW: true }]);
    expect(failed(inspectProbes(rw.info, config, digest, rw.vols, [layer]))).toContain("only_our_volumes");
    const none = inspected([]);
    expect(failed(inspectProbes(none.info, config, digest, none.vols, [layer]))).toEqual(["only_our_volumes"]);
    const unexpected = inspected([{ Type: "bind", Destination: "/opt/x", RW: false }]);
    expect(failed(inspectProbes(unexpected.info, config, digest, unexpected.vols, [layer]))).toEqual(["only_our_volumes"]);
    const bigger = inspected([{ Type: "volume", Name: "layer", Destination: "/workspace/node_modules", RW: false }], config.workspaceBytes * 2);
    expect(failed(inspectProbes(bigger.info, config, digest, bigger.vols, [layer]))).toEqual(["volumes_size_capped"]);
  });
});

import { describe, expect, it } from "vitest";
import type { EnvBuildBody } from "../../daemon/src/contracts/api-responses.js";
import { envBuildText } from "./render.js";

const FAILED: EnvBuildBody = {
  kind: "env_build",
  command: "npm install",
  tool: "npm",
  registry: "https://registry.npmjs.org/",
  registry_from: "default",
  auth_dropped: false,
  allowed_hosts: ["registry.npmjs.org:443"],
  exit_code: 137,
  timed_out: false,
  oom_killed: false,
  memory_limit_bytes: 3 * 1024 ** 3,
  output: "Killed\n",
  egress: [],
  layer: null,
};

describe("envBuildText: why no layer was made", () => {
  it("regression: an install the kernel killed for the sandbox's memory limit said only 'the install exited 137'; it names the limit and what it holds", () => {
    const text = envBuildText({ ...FAILED, oom_killed: true });
    expect(text).toContain(
      "the install was killed by the install sandbox's memory limit (3 GiB, which also holds the installed folder and the download cache): no layer was made",
    );
    expect(text).not.toContain("exited 137");
  });

  it("another failure says its exit code, a timeout says so", () => {
    expect(envBuildText(FAILED)).toContain("the install exited 137: no layer was made");
    expect(envBuildText({ ...FAILED, exit_code: null, timed_out: true })).toContain("the install timed out: no layer was made");
  });
});

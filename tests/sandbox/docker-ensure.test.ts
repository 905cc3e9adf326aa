import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const run = (env: Record<string, string>) =>
  spawnSync("bash", ["scripts/docker-ensure.sh"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, encoding: "utf8", timeout: 60_000 });

describe("scripts/docker-ensure.sh", () => {
  it("finds the running engine, changes nothing, and says so", () => {
    const r = run({});
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/engine reachable at unix:\/\/\/var\/run\/docker.sock: Docker \S+ \(API 1\.\d+\); nothing to do/);
  });

  it("a DOCKER_HOST that does not answer is an error, never silently replaced by a local engine", () => {
    const r = run({ DOCKER_HOST: "unix:///nonexistent/docker.sock" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("does not answer");
  });
});

import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GenericContainer, Wait, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiResponse } from "../../daemon/src/contracts/api.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { buildNodeBaseImage } from "../../sandbox-image/image-builder.js";
import { REPO, runClient } from "../e2e/harness.js";
import { OWNER_LABEL, OWNER_VALUE, PURPOSE_LABEL } from "../../daemon/src/sandbox/labels.js";

/**
 * The top-level Dockerfile, built the way CI must build it here (no registry):
 * on the locally assembled Node runtime base, from a staging context holding
 * the compiled dist/ and only the production node_modules. The daemon then
 * runs in that container with the engine socket and a state dir mounted, and
 * the client drives it over the socket, from the host and from inside.
 */
process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

const docker = createDockerClient(process.env);
const tag = `mini-agent/daemon-test:${crypto.randomBytes(4).toString("hex")}`;
let work: string;
let stateDir: string;
let started: StartedTestContainer | null = null;

function run(cmd: string, args: string[], cwd = REPO): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0 && !(cmd === "npx" && fs.existsSync(path.join(work, "ctx/dist/daemon/src/cli.js")))) {
    throw new Error(`${cmd} ${args.join(" ")} failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

/** dist/ compiled into the staging dir (never the shared checkout's dist/) */
function stageContext(ctx: string): void {
  fs.mkdirSync(ctx, { recursive: true });
  for (const f of ["Dockerfile", ".dockerignore", "package.json", "package-lock.json"]) fs.copyFileSync(path.join(REPO, f), path.join(ctx, f));
  fs.cpSync(path.join(REPO, "fixtures"), path.join(ctx, "fixtures"), { recursive: true });
  if (process.env.MINI_AGENT_TEST_BINS === "dist") {
    // the test command has just run `npm run build`: a second full compile here cost ~40 s of CPU on
    // 2 shared cores; the copy leaves out source maps and the test drivers bundled into dist/tests/
    fs.cpSync(path.join(REPO, "dist"), path.join(ctx, "dist"), {
      recursive: true,
      filter: (src) => !src.endsWith(".map") && path.relative(path.join(REPO, "dist"), src) !== "tests",
    });
  } else {
    // tsc emits even when an unrelated file has a type error; the bins are checked below
    run("npx", ["tsc", "-p", "tsconfig.json", "--outDir", path.join(ctx, "dist"), "--sourceMap", "false"]);
    // the second step of `npm run build`: each bin as one file over tsc's
    run(process.execPath, ["--import", "tsx", "scripts/bundle.ts", "--dist", path.join(ctx, "dist")]);
  }
  for (const bin of ["dist/daemon/src/cli.js", "dist/client/src/cli.js"]) {
    expect(fs.readFileSync(path.join(ctx, bin), "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
  }
  // production dependencies only, as `npm ls --omit=dev` resolves them from the lock
  const prod = run("npm", ["ls", "--omit=dev", "--all", "--parseable"])
    .split("\n")
    .filter((p) => p.startsWith(path.join(REPO, "node_modules")));
  for (const dir of prod) {
    const rel = path.relative(REPO, dir);
    const dest = path.join(ctx, rel);
    if (fs.existsSync(dest)) continue;
    fs.cpSync(dir, dest, { recursive: true, filter: (src) => !src.slice(dir.length).includes("/node_modules/") });
  }
  if (fs.existsSync(path.join(REPO, "node_modules/.package-lock.json"))) {
    fs.copyFileSync(path.join(REPO, "node_modules/.package-lock.json"), path.join(ctx, "node_modules/.package-lock.json"));
  }
}

beforeAll(async () => {
  await docker.ping();
  work = fs.mkdtempSync(path.join(os.tmpdir(), "ma-image-"));
  stateDir = path.join(work, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  // the sandbox image the daemon will pin, recorded in this state dir's lock
  const built = spawnSync(process.execPath, ["--import", "tsx", "sandbox-image/build.ts", "--state-dir", stateDir, "--quiet"], { cwd: REPO, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`sandbox image build failed: ${built.stderr}`);
  await buildNodeBaseImage(docker);
  stageContext(path.join(work, "ctx"));
});

afterAll(async () => {
  if (started) await started.stop({ remove: true, removeVolumes: true }).catch(() => undefined);
  await docker
    .getImage(tag)
    .remove({ force: true })
    .catch(() => undefined);
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe("the mini-agent Docker image", () => {
  it("builds on the local Node base, runs the daemon with the engine socket mounted, and answers the client", async () => {
    const image = await GenericContainer.fromDockerfile(path.join(work, "ctx"))
      .withBuildArgs({ BASE_IMAGE: "mini-agent/node-base:local" })
      .build(tag, { deleteOnExit: false });
    started = await image
      .withLabels({ [OWNER_LABEL]: OWNER_VALUE, [PURPOSE_LABEL]: "daemon-image-test" })
      .withBindMounts([
        { source: "/var/run/docker.sock", target: "/var/run/docker.sock" },
        { source: stateDir, target: "/state" },
      ])
      .withWaitStrategy(Wait.forLogMessage("mini-agent-daemon ready"))
      .withStartupTimeout(120_000)
      .start();

    // the host client over the socket the container created in the mounted state dir
    const socket = path.join(stateDir, "daemon.sock");
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    const health = await runClient(["health", "--json", "--socket", socket]);
    const h = ApiResponse.parse(JSON.parse(health.stdout));
    expect(h.kind === "health" && h.engine.reachable && h.engine.image_present).toBe(true);
    expect(h.kind === "health" && h.isolation.verdict).not.toBe("passed"); // nothing probed yet

    // the probes, run by the daemon inside the container against the host engine
    const probe = await runClient(["probe", "--json", "--socket", socket]);
    const report = JSON.parse(probe.stdout) as { passed: boolean; probes: Array<{ id: string; passed: boolean }> };
    expect(report.probes.length).toBeGreaterThan(10);
    expect(probe.code).toBe(report.passed ? 0 : 2);

    // the client baked into the image, from inside the container
    const inside = await started.exec(["node", "/opt/mini-agent/dist/client/src/cli.js", "health", "--json"]);
    const hi = ApiResponse.parse(JSON.parse(inside.stdout));
    expect(hi.kind === "health" && hi.isolation.verdict).toBe(report.passed ? "passed" : "failed");

    // SIGTERM (docker stop) ends the daemon cleanly: exit 0, socket removed
    await started.stop({ remove: false, timeout: 30_000 });
    const info = await docker.getContainer(started.getId()).inspect();
    expect(info.State.ExitCode).toBe(0);
    expect(fs.existsSync(socket)).toBe(false);
    await docker.getContainer(started.getId()).remove({ force: true });
    started = null;
  });
});

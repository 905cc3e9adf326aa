import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Two tiers, split by what a test needs rather than by where it lives:
// - unit: needs no Docker engine. Fast tests beside the logic, plus cross-module and
//   spawned-process tests under tests/ named *.unit.test.ts. The tier runs with
//   DOCKER_HOST pointing at a socket that does not exist, so a test that quietly
//   starts using the engine fails here instead of slowing this tier down.
// - integration: needs the engine (real sandboxes, images, probes). Runs after the
//   unit tier, several files at once: every file scopes its containers, volumes and
//   state dirs by its own run ids and prefixes, and daemons reap only their own
//   instance's sandboxes, so no file touches another's resources.
// Most of a test's time is spent waiting on the engine or a child process, not on
// this process's CPU, so the worker count is above the core count.
const workers = Number(process.env.MINI_AGENT_TEST_WORKERS ?? Math.max(3, os.availableParallelism() + 1));
// The engine tier's long poles, longest first (vitest's per-file times in a fresh-clone CI run; offline-report and fleet/cancel
// placed by their times after one full report replaced two and the cancel's slow cases were halved). Started last they decide the wall time
// alone; started first they overlap everything else. Vitest orders by the durations it
// cached on earlier runs, but a fresh clone has none. A renamed file only loses its place.
const LONG_FIRST = [
  "tests/e2e/real-suites.test.ts",
  "tests/fleet/cancel.test.ts",
  "tests/sandbox/families.test.ts",
  "tests/e2e/eval-gate.test.ts",
  "tests/experiments/offline-report.test.ts",
  "tests/fleet/fleet.test.ts",
  "tests/fleet/worker-concurrency.test.ts",
  "tests/orchestrators/langgraph-reentry.test.ts",
  "tests/e2e/run-flow.test.ts",
  "tests/recovery/crash.test.ts",
  "tests/fleet/worker-live-gate.test.ts",
  "tests/e2e/family-fixtures.test.ts",
  "tests/sandbox/adversarial.test.ts",
  "tests/docker-image/daemon-image.test.ts",
  "tests/tools/report-formats.test.ts",
  "tests/fleet/queue-auth.test.ts",
  "tests/e2e/restart-after-kill.test.ts",
];

class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((p) => f.moduleId.endsWith(p));
      return i === -1 ? LONG_FIRST.length : i;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

const NO_ENGINE = `unix://${path.join(os.tmpdir(), "mini-agent-unit-tier-has-no-docker.sock")}`;

export default defineConfig({
  test: {
    maxWorkers: workers,
    sequence: { sequencer: LongPolesFirst },
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "daemon/src/**/*.test.ts",
            "client/src/**/*.test.ts",
            "client-lib/**/*.test.ts",
            "probes/**/*.test.ts",
            "sandbox-image/**/*.test.ts",
            "eval/**/*.test.ts",
            "worker/src/**/*.test.ts",
            "experiments/src/**/*.test.ts",
            "tests/**/*.unit.test.ts",
          ],
          env: { DOCKER_HOST: NO_ENGINE },
          // generous: spawned daemons and clients share two cores with the integration tier's engine work
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "integration",
          include: ["tests/**/*.test.ts"],
          exclude: ["tests/**/*.unit.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

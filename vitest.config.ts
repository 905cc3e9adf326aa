import { defineConfig } from "vitest/config";

// Two tiers: fast unit tests beside the logic, and real-Docker / real-process
// tests under tests/ that run one file at a time with generous timeouts.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["daemon/src/**/*.test.ts", "client/src/**/*.test.ts", "probes/**/*.test.ts", "sandbox-image/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["tests/**/*.test.ts"],
          fileParallelism: false,
          testTimeout: 240_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "../../daemon/src/api/server.testkit.js";
import type { RunService } from "../../daemon/src/runtime/service.js";
import { main, type ClientIO } from "./main.js";

/**
 * `probe --family` (and health's per-family lines) against the real API server on a real socket: the family the user
 * names is the one the daemon probes (its report is stored per family), and a family
 * that does not exist is a usage error that sends nothing.
 */
let dir: string;
let socket: string;
let api: TestApi;
let probed: Array<{ runtime: unknown; family: unknown }>;

type Fam = { verdict: "none" | "stale" | "passed" | "failed" | "unavailable"; generated_at: string | null; reason: string | null };
let families: Record<string, Fam> = {};

beforeEach(async () => {
  probed = [];
  families = {
    python: { verdict: "none", generated_at: null, reason: "no_report" },
    go: { verdict: "none", generated_at: null, reason: "image_missing" },
  };
  const isolation = {
    runProbes: async (runtime?: unknown, family?: unknown) => {
      probed.push({ runtime, family });
      return { passed: true, image_family: family ?? "node", probes: [{ id: "p1", passed: true, property: "x" }] };
    },
    latestReport: async () => null,
    health: async () => ({
      engine: { reachable: true, version: "20.10", runtime: "runc", image_digest: "sha256:x", image_present: true, error: null },
      isolation: { verdict: "passed" as const, generated_at: "2026-01-01T00:00:00Z", reason: null },
      families,
    }),
  };
  api = await startTestApi({ runService: {} as RunService, isolation }, "ma-client-probe-");
  ({ dir, socket } = api);
});

afterEach(async () => {
  await api.stop();
});

function io() {
  const out: string[] = [];
  const err: string[] = [];
  const value: ClientIO = {
    env: {},
    cwd: dir,
    isTTY: false,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    clock: { now: () => 0, every: () => () => {} },
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    ask: async () => "",
  };
  return { value, out: () => out.join(""), err: () => err.join("") };
}

describe("mini-agent-client probe --family", () => {
  it("probes the named family (and runtime) and says which image was verified", async () => {
    const t = io();
    expect(await main(["probe", "--family", "python", "--runtime", "runsc", "--socket", socket], t.value)).toBe(0);
    expect(probed).toEqual([{ runtime: "runsc", family: "python" }]);
    expect(t.out()).toContain("isolation verified (1 probes passed, python image)");
  });

  it("without --family the daemon probes its default family", async () => {
    const t = io();
    expect(await main(["probe", "--socket", socket], t.value)).toBe(0);
    expect(probed).toEqual([{ runtime: undefined, family: undefined }]);
  });

  it("a name that cannot be a family is a usage error (64) naming the families, and nothing is probed (a well-formed one may be a custom family: the daemon decides)", async () => {
    const t = io();
    expect(await main(["probe", "--family", "Ruby!", "--socket", socket], t.value)).toBe(64);
    expect(t.err()).toContain("node, python, go");
    expect(probed).toEqual([]);
  });
});

describe("mini-agent-client health shows every image family", () => {
  it("each other family's verdict with the command that fixes it; they do not change the exit code", async () => {
    const t = io();
    expect(await main(["health", "--socket", socket], t.value)).toBe(0);
    // regression: a family never probed said `none (report_stale)`; the printed probe lacked the --socket it needs
    expect(t.out()).toContain(
      `python  none: no probe has run yet for this image, sandbox config, engine and runtime; mini-agent-client probe --socket ${socket} --family python`,
    );
    expect(t.out()).toContain("go      none: the image is not built; npm run image:build -- --family go");
  });

  it("a stale report is told apart from none, with the report's date", async () => {
    families = { python: { verdict: "stale", generated_at: "2026-01-01T00:00:00Z", reason: "report_stale" } };
    const t = io();
    expect(await main(["health", "--socket", socket], t.value)).toBe(0);
    expect(t.out()).toContain("python  stale (report of 2026-01-01T00:00:00Z): older than a live run accepts; mini-agent-client probe");
  });
});

import fs from "node:fs";
import path from "node:path";
import { Agent, request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MiniAgentError } from "../errors.js";
import type { RunService } from "../runtime/service.js";
import type { LiveGate } from "./ports.js";
import { startTestApi, type TestApi } from "./server.testkit.js";

/**
 * The create-run route's early live gate asks about the family the request's task
 * spec names: a python task needs a passing python report, not the node one.
 * The server, socket and HTTP are real; the gate records what it was asked and refuses.
 */
let dir: string;
let socket: string;
let api: TestApi;
let asked: Array<Parameters<LiveGate["check"]>[0]>;
/** what reached the run service (a fixture's own family is gated there, by the live model factory) */
let created: unknown[];

beforeEach(async () => {
  asked = [];
  created = [];
  const liveGate: LiveGate = {
    check: async (input) => {
      asked.push(input);
      return { ok: false, code: "isolation_unverified", reason: "report_stale", refresh_command: "mini-agent-client probe" };
    },
  };
  const _isolation = { runProbes: async () => ({}), latestReport: async () => null, health: async () => Promise.reject(new Error("unused")) };
  api = await startTestApi(
    {
      runService: {
        createRun: async (input: unknown) => {
          created.push(input);
          throw new MiniAgentError("isolation_unverified", "refused by the model factory's gate");
        },
      } as unknown as RunService,
      liveGate,
    },
    "ma-gate-family-",
  );
  ({ dir, socket } = api);
});

afterEach(async () => {
  await api.stop();
});

async function createLive(taskSpec: Record<string, unknown> | null, extra: Record<string, unknown> = {}): Promise<number> {
  const agent = new Agent({ connect: { socketPath: socket } });
  try {
    const res = await request("http://localhost/v1/runs", {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ workspace: dir, ...(taskSpec && { task_spec: taskSpec }), model: "live", ...extra }),
    });
    await res.body.text();
    return res.statusCode;
  } finally {
    await agent.close();
  }
}

const SPEC = {
  schema_version: 1,
  name: "t",
  task: "t",
  writable: ["a.py"],
  test_presets: { t: { command: ["python3", "-m", "pytest"], parser: "junit_xml" } },
  verify_preset: "t",
};

describe("the create-run route's live gate", () => {
  it("asks for the task spec's image family", async () => {
    expect(await createLive({ ...SPEC, image_family: "python" })).not.toBe(201);
    expect(asked).toEqual([{ backend: "container", family: "python" }]);
  });

  it("regression: a fixture's live run was gated on the configured family (node), not the family its task.json names", async () => {
    const fixture = path.join(dir, "fixture");
    fs.mkdirSync(fixture);
    fs.writeFileSync(path.join(fixture, "task.json"), JSON.stringify({ ...SPEC, image_family: "python" }));
    expect(await createLive(null, { fixture_dir: fixture })).not.toBe(201);
    expect(asked).toEqual([{ backend: "container", family: "python" }]);
    // --image-family names it up front and wins over the fixture's
    expect(await createLive(null, { fixture_dir: fixture, image_family: "go" })).not.toBe(201);
    expect(asked.at(-1)).toEqual({ backend: "container", family: "go" });
    // the gate refused both before the run service was asked for anything
    expect(created).toEqual([]);
  });

  it("without a family asks for the configured one", async () => {
    await createLive(SPEC);
    expect(asked).toEqual([{ backend: "container" }]);
  });
});

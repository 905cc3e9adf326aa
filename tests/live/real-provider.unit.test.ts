import { describe, expect, it } from "vitest";
import { Decision } from "../../daemon/src/contracts/decision.js";
import { toolDescriptions } from "../../daemon/src/tools/descriptions.js";
import { createCredentialSource, takeCredentialEnv } from "../../daemon/src/credentials/credential-source.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import { LiveModel } from "../../daemon/src/models/live/live-model.js";

/**
 * Against a REAL provider. It sends a request off this machine, so it runs only
 * when asked explicitly (MINI_AGENT_LIVE_PROVIDER_TEST=1) AND a key and model
 * are configured; otherwise it is skipped, never silently passed.
 */
const env = { ...process.env };
const optedIn = env.MINI_AGENT_LIVE_PROVIDER_TEST === "1" && !!(env.MINI_AGENT_API_KEY || env.OPENAI_API_KEY) && !!env.MINI_AGENT_MODEL;

describe.skipIf(!optedIn)("real OpenAI-compatible provider (opt-in)", () => {
  it("answers one turn with a valid decision and token usage", async () => {
    const credentials = createCredentialSource({ env: takeCredentialEnv(env), filePath: "/nonexistent/credentials.json" });
    const live = new LiveModel({ config: resolveLiveModelConfig(env), credentials });
    const tools = toolDescriptions() as unknown as Array<Record<string, unknown>>;
    const turn = await live.decide(
      { runId: "real", messages: [{ role: "user", content: "Read the file src/index.js with the read_file tool." }], tools },
      AbortSignal.timeout(120_000),
    );
    expect(Decision.safeParse(turn.decision).success).toBe(true);
    expect(turn.usage?.prompt_tokens ?? 0).toBeGreaterThan(0);
  });
});

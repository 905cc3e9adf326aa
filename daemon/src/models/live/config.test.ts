import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../errors.js";
import { LIVE_MODEL_DEFAULTS, providerHost, resolveLiveModelConfig } from "./config.js";
import { providerMessage } from "./http.js";

describe("live model config", () => {
  it("environment over file over defaults; OPENAI_BASE_URL only as a fallback", () => {
    const c = resolveLiveModelConfig({ OPENAI_BASE_URL: "http://127.0.0.1:11434/v1", MINI_AGENT_MAX_TOKENS: "512" }, { model: "llama3", max_tokens: 100 });
    expect(c).toMatchObject({ base_url: "http://127.0.0.1:11434/v1", model: "llama3", max_tokens: 512, temperature: 0, mode: "tools" });
    const d = resolveLiveModelConfig({ OPENAI_BASE_URL: "https://a.test/v1", MINI_AGENT_BASE_URL: "https://b.test/v1", MINI_AGENT_MODEL: "m" });
    expect(d.base_url).toBe("https://b.test/v1");
    expect(resolveLiveModelConfig({ MINI_AGENT_MODEL: "m" }).base_url).toBe(LIVE_MODEL_DEFAULTS.base_url);
  });

  it("regression: no model names the variable to set (it said 'Invalid input: expected string, received undefined → at model')", () => {
    expect(() => resolveLiveModelConfig({}, {})).toThrow(
      /^no live model is configured: set MINI_AGENT_MODEL \(and MINI_AGENT_API_KEY\) in the daemon's environment/,
    );
  });

  it.each([
    ["no model", {}, {}],
    ["unknown file option", { MINI_AGENT_MODEL: "m" }, { temprature: 1 }],
    ["non-numeric env", { MINI_AGENT_MODEL: "m", MINI_AGENT_TEMPERATURE: "hot" }, {}],
    ["credentials in the URL", { MINI_AGENT_MODEL: "m", MINI_AGENT_BASE_URL: "https://user:pw@api.test/v1" }, {}],
    ["non-http scheme", { MINI_AGENT_MODEL: "m", MINI_AGENT_BASE_URL: "file:///etc/passwd" }, {}],
    ["unknown mode", { MINI_AGENT_MODEL: "m", MINI_AGENT_MODEL_MODE: "xml" }, {}],
    ["plain http to another machine", { MINI_AGENT_MODEL: "m", MINI_AGENT_BASE_URL: "http://10.0.0.5:8000/v1" }, {}],
    ["a flag that is not 1/0", { MINI_AGENT_MODEL: "m", MINI_AGENT_ALLOW_INSECURE_HTTP: "yes" }, {}],
  ])("fails loudly on %s", (_n, env, file) => {
    let err: unknown;
    try {
      resolveLiveModelConfig(env, file);
    } catch (e) {
      err = e;
    }
    expect(isMiniAgentError(err, "invalid_request")).toBe(true);
    expect(String((err as Error).message)).not.toContain("pw@");
  });

  it("plain http is fine on loopback, and elsewhere only when explicitly allowed", () => {
    expect(resolveLiveModelConfig({ MINI_AGENT_MODEL: "m", MINI_AGENT_BASE_URL: "http://[::1]:8080/v1" }).base_url).toBe("http://[::1]:8080/v1");
    expect(resolveLiveModelConfig({ MINI_AGENT_MODEL: "m", MINI_AGENT_BASE_URL: "http://localhost:11434/v1" }).allow_insecure_http).toBe(false);
    const lan = resolveLiveModelConfig({ MINI_AGENT_MODEL: "m", MINI_AGENT_BASE_URL: "http://10.0.0.5:8000/v1", MINI_AGENT_ALLOW_INSECURE_HTTP: "1" });
    expect(lan.allow_insecure_http).toBe(true);
  });

  it("keeps only the provider host for records", () => {
    expect(providerHost({ base_url: "https://api.deepseek.com/v1" })).toBe("api.deepseek.com");
  });

  it("redacts the known key, key-like tokens and bearer values but keeps ordinary words", () => {
    const out = providerMessage("Incorrect API key provided: sk-abc***wxyz; Bearer abc.def; secret=K3Y-VALUE-123456 hello", ["K3Y-VALUE-123456"]);
    expect(out).not.toContain("sk-abc");
    expect(out).not.toContain("abc.def");
    expect(out).not.toContain("K3Y-VALUE");
    expect(out).toContain("Incorrect API key provided");
    expect(out).toContain("hello");
  });
});

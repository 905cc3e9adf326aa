import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCredentialSource, takeCredentialEnv } from "./credential-source.js";
import { isMiniAgentError } from "../errors.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-cred-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function expectCode(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (err) {
    expect(isMiniAgentError(err) && err.code).toBe(code);
    return;
  }
  throw new Error("expected a throw");
}

describe("credential source", () => {
  it("moves the key variables out of the environment so child processes cannot inherit them", () => {
    const env: NodeJS.ProcessEnv = { MINI_AGENT_API_KEY: "k1", OPENAI_API_KEY: "k2", PATH: "/bin" };
    const taken = takeCredentialEnv(env);
    expect(env).toEqual({ PATH: "/bin" });
    const src = createCredentialSource({ env: taken, filePath: path.join(dir, "credentials.json") });
    expect(src.read()).toEqual({ value: "k1", origin: "env:MINI_AGENT_API_KEY" });
  });

  it("falls back to OPENAI_API_KEY, then to the 0600 file", () => {
    const file = path.join(dir, "credentials.json");
    expect(createCredentialSource({ env: new Map([["OPENAI_API_KEY", "k2"]]), filePath: file }).read().origin).toBe("env:OPENAI_API_KEY");
    fs.writeFileSync(file, JSON.stringify({ api_key: "from-file" }), { mode: 0o600 });
    expect(createCredentialSource({ env: new Map(), filePath: file }).read()).toEqual({ value: "from-file", origin: "file:credentials.json" });
  });

  it("reads nothing until read() is called, and counts reads", () => {
    const file = path.join(dir, "credentials.json");
    const src = createCredentialSource({ env: new Map(), filePath: file });
    expect(src.reads).toBe(0);
    // the file does not exist yet: creating the source did not need it
    fs.writeFileSync(file, JSON.stringify({ api_key: "late" }), { mode: 0o600 });
    expect(src.read().value).toBe("late");
    expect(src.reads).toBe(1);
  });

  it("refuses a group/world-readable credentials file with the chmod to run", () => {
    const file = path.join(dir, "credentials.json");
    fs.writeFileSync(file, JSON.stringify({ api_key: "secret-value" }));
    fs.chmodSync(file, 0o644);
    const src = createCredentialSource({ env: new Map(), filePath: file });
    expectCode(() => src.read(), "credentials_insecure");
    try {
      src.read();
    } catch (err) {
      expect((err as Error).message).toContain("chmod 600");
      expect((err as Error).message).not.toContain("secret-value");
    }
  });

  it("refuses a symlinked credentials file, a missing one and malformed JSON without echoing content", () => {
    const real = path.join(dir, "real.json");
    fs.writeFileSync(real, JSON.stringify({ api_key: "x" }), { mode: 0o600 });
    const link = path.join(dir, "credentials.json");
    fs.symlinkSync(real, link);
    expectCode(() => createCredentialSource({ env: new Map(), filePath: link }).read(), "credentials_insecure");
    expectCode(() => createCredentialSource({ env: new Map(), filePath: path.join(dir, "none.json") }).read(), "credentials_missing");
    const bad = path.join(dir, "bad.json");
    fs.writeFileSync(bad, "{api_key: sk-leaky", { mode: 0o600 });
    try {
      createCredentialSource({ env: new Map(), filePath: bad }).read();
      throw new Error("expected a throw");
    } catch (err) {
      expect(isMiniAgentError(err, "credentials_missing")).toBe(true);
      expect((err as Error).message).not.toContain("sk-leaky");
    }
    const extra = path.join(dir, "extra.json");
    fs.writeFileSync(extra, JSON.stringify({ api_key: "x", base_url: "y" }), { mode: 0o600 });
    expectCode(() => createCredentialSource({ env: new Map(), filePath: extra }).read(), "credentials_missing");
  });
});

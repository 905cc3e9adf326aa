import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretSet, redactDeep, redactText, REDACTED } from "./index.js";
import { CREDENTIAL_CORPUS } from "./credential-corpus.testkit.js";
import { VALUE_SHAPES } from "./rules.js";

/** One sample per value shape in rules.ts: [shape, text, the secret part that must vanish]. */
const SECRET_SAMPLES: ReadonlyArray<[string, string, string]> = [
  ["pem_private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAtopsecretpem\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAtopsecretpem"],
  ["authorization_header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="],
  ["bearer_token", "curl -H 'x: Bearer shortTok9'", "shortTok9"],
  ["npm_auth", "//registry.example/:_authToken=npm_Abc123Def456", "npm_Abc123Def456"],
  ["sk_key", "key sk-proj-AbCdEf0123456789xyz used", "sk-proj-AbCdEf0123456789xyz"],
  ["stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"],
  ["aws_access_key_id", "aws id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"],
  ["github_token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789 and github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
  ["slack_token", "xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"],
  ["jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
  ["google_api_key", "maps key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW used", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"],
  ["assigned_secret", "STRIPE_KEY=Zx81Kq0PmA7wT4nB2vR9\nsigning_key: q7Lm2Rt9Xv4Bn8Kd3Pw6", "Zx81Kq0PmA7wT4nB2vR9"],
  ["secret_assignment", 'db password="hunter2hunter" client_secret = s3cr3tV4lue', "hunter2hunter"],
  ["url_credentials", "remote https://alice:gitCredPw7Qx2@github.example.com/x.git", "gitCredPw7Qx2"],
  ["pgpass_line", "db.internal:5432:orders:app:pgPassW0rd-91", "pgPassW0rd-91"],
  ["netrc_password", "machine api.example.com login alice password n3trcPassw0rd", "n3trcPassw0rd"],
  ["password_hash", "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "HqJZimcKQFAMYayBlzkrA/"],
  ["xml_secret", "<server><password>mvnPassw0rd!x</password></server>", "mvnPassw0rd!x"],
  ["prefixed_token", "VAULT_TOKEN hvs.CAESIVaultT0kenValue0123456789abcd", "CAESIVaultT0kenValue0123456789abcd"],
  ["auth_blob", '{"auths":{"r.example.com":{"auth":"YWxpY2U6ZG9ja2VyUGFzczk5"}}}', "YWxpY2U6ZG9ja2VyUGFzczk5"],
];

describe("redactText: every value shape", () => {
  it("has a sample for every shape in the rule set", () => {
    expect(new Set(SECRET_SAMPLES.map(([name]) => name))).toEqual(new Set(VALUE_SHAPES.map((s) => s.name)));
  });
  for (const [name, text, secret] of SECRET_SAMPLES) {
    it(`${name}: ${JSON.stringify(text.slice(0, 40))}`, () => {
      const out = redactText(text);
      expect(out).not.toContain(secret);
      expect(out).toContain(REDACTED);
    });
  }

  it("regression: a Bearer token of 8 to 15 characters is redacted (the ledger and trace used to keep it)", () => {
    for (let n = 8; n <= 15; n++) {
      const tok = "aB3dE6gH9jK2mN5pQ".slice(0, n);
      expect(redactText(`Authorization header was Bearer ${tok}.`)).not.toContain(tok);
      expect(redactText(`bearer ${tok}`)).not.toContain(tok);
    }
  });

  it("a long opaque high-entropy token without a prefix is redacted", () => {
    expect(redactText("key=Zx81Kq0PmA7wT4nB2vR9cL5hJ3yF6dG1")).toBe(`key=${REDACTED}`);
    expect(redactText("value Zx81Kq0PmA7wT4nB2vR9cL5hJ3yF6dG1sE end")).toBe(`value ${REDACTED} end`);
  });

  it("replaces the exact live credentials it is given, whatever their shape, longest first", () => {
    expect(redactText("echo plainpassphrase and plainpassphrase2", ["plainpassphrase", "plainpassphrase2"])).toBe(`echo ${REDACTED} and ${REDACTED}`);
    const set = createSecretSet();
    set.add("short");
    set.add("plainpassphrase");
    set.add("plainpassphrase2");
    expect([...set.values()].sort()).toEqual(["plainpassphrase", "plainpassphrase2"]);
    expect(redactText("plainpassphrase2", set.values())).toBe(REDACTED);
  });
});

describe("redactText: the values of credential files, in whatever file they are pasted", () => {
  for (const f of CREDENTIAL_CORPUS.filter((c) => c.binary === undefined)) {
    it(`regression: the values of a ${f.path} reached search snippets and outputs (3 of 13 caught)`, () => {
      const out = redactText(f.content);
      expect(f.secrets.filter((v) => out.includes(v))).toEqual([]);
      // and line by line, as search returns them
      const lines = f.content
        .split("\n")
        .map((l) => redactText(l))
        .join("\n");
      expect(f.secrets.filter((v) => lines.includes(v))).toEqual([]);
    });
  }
});

describe("redactText keeps ordinary content", () => {
  const sha = createHash("sha256").update("x").digest("hex");
  const kept = [
    `version ${sha}`,
    `image sha256:${sha}`,
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "act_0123456789abcdef0123456789abcdef call_0123456789abcdef01234567 run_0123456789abcdef0123",
    '"integrity": "sha512-Vb9uXn0W9fYpN6m1Vx5lB+2QpS9LkP7r3yE8Jd4Gh6KtZc1oM0aTqWsXeRfDgU2HiJ5yKlN8bMvC7xZ0a1b2c3d=="',
    "src/components/UserProfileSettingsPage2/IndexComponentExport.tsx",
    "function handleUserInputForTheLongestNamedThingInTheWorld() {}",
    "const token = getToken();\nif (token === undefined) return;\nlet password: string;\ntoken: string,",
    "max_tokens=512 prompt_tokens: 12",
    "Debug2.assertOptionalToken = assertOptionalToken;\nlet token = scanner2.scan();",
    '"integrity": "sha512-wMue2Sy4GAVTk6Ic4tJVcnfdau+gx2EnG7S+uAEe+TWJFqE4YoWN4/H8MSLj4eYJKxGg26lZwboEniNiNwZQ6Q=="',
    "Accessors_are_only_available_when_targeting_ECMAScript_5_and_higher_1056",
    "the bearer of bad news",
    "sk-learn and task-1234",
    "log in with your password and the login page, then the password field",
    '"auth": "required", auth: none',
    "see https://github.com/org/repo and git@github.com:org/repo.git",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text quoting placeholders, which redaction must keep as is
    'const url = `${scheme}://${host}:${port}/db`; s.replace(/(\\d+)/, "$1$2")',
    "time 12:30:45 at host:8080:path",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a config placeholder, not a secret, which redaction must keep as is
    "<password>${DB_PASSWORD}</password>",
  ];
  for (const text of kept) {
    it(JSON.stringify(text.slice(0, 50)), () => {
      expect(redactText(text)).toBe(text);
    });
  }
});

describe("redactDeep", () => {
  it("redacts values under secret-looking field names at any depth, but keeps counters and flags", () => {
    const out = redactDeep({
      a: { apiKey: "x", headers: { Authorization: "Basic abc" } },
      password: ["p"],
      prompt_tokens: 5,
      tokens: 9,
      has_token: true,
      secret: null,
    });
    expect(out).toEqual({
      a: { apiKey: REDACTED, headers: { Authorization: REDACTED } },
      password: REDACTED,
      prompt_tokens: 5,
      tokens: 9,
      has_token: true,
      secret: null,
    });
  });

  it("keeps versions, digests and ids whole by field name, and still removes a live credential there", () => {
    const v = "Zx81Kq0PmA7wT4nB2vR9cL5hJ3yF6dG1"; // opaque-looking, but under a verbatim field name
    expect(redactDeep({ version: v, workspace_digest: v, call_id: "c1", note: v })).toEqual({ version: v, workspace_digest: v, call_id: "c1", note: REDACTED });
    expect(redactDeep({ version: "plainpassphrase" }, ["plainpassphrase"])).toEqual({ version: REDACTED });
  });

  it("redacts an Error's message and stack, survives cycles, and never changes its input", () => {
    const input: Record<string, unknown> = { err: new Error("failed with Bearer abcdefgh12") };
    input.self = input;
    const out = redactDeep(input) as Record<string, Record<string, unknown>>;
    expect(JSON.stringify(out.err)).not.toContain("abcdefgh12");
    expect(out.self).toBe(REDACTED);
    expect((input.err as Error).message).toContain("abcdefgh12");
  });
});

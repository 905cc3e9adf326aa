import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { addedLines, describeHit, scanLines } from "./secret-scan.js";

/**
 * The secret scan of a run's diff (issue 12): added lines only, file and line
 * named, never the value; ordinary code, lock files and fixtures stay clean.
 */
const scanNew = (path: string, text: string) => scanLines(path, addedLines(null, text));

/** [file, text, rule]: each planted on line 2 of a new file */
const PLANTED: ReadonlyArray<[string, string, string]> = [
  ["deploy/key.pem", "-----BEGIN OPENSSH PRIVATE KEY-----", "pem_private_key"],
  ["config/tls.json", '  "key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",', "pem_private_key"],
  ["src/aws.ts", 'const id = "AKIA2E0A8F3B244C9986";', "aws_access_key_id"],
  ["src/gh.py", 'GH = "ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Jj7Hh9Gg0Ff2Dd4"', "github_token"],
  ["src/gh2.py", 'GH = "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"', "github_token"],
  ["src/slack.js", "hook('xoxb-2222-3333-abcdEFGHijkl')", "slack_token"],
  ["src/openai.ts", "const client = new OpenAI('sk-proj-Q9wErTy7UiOp3AsDfGh1');", "sk_key"],
  ["src/maps.ts", 'const maps = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW";', "google_api_key"],
  ["src/pay.rb", 'client = Stripe::StripeClient.new("sk_live_4eC39HqLyjWDarjtT1zdp7dc")', "stripe_key"],
  ["tests/auth.test.ts", 'const t = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";', "jwt"],
  [".env.production", "PAYMENTS_KEY=q7Lm2Rt9Xv4Bn8Kd3Pw6Zc1F", "assigned_secret"],
  ["config/app.json", '  "webhookSecret": "Zx81Kq0PmA7wT4nB2vR9cL5h",', "assigned_secret"],
  ["config/app.yaml", "  auth_token: Hq3Vn8Lz2Wc7Rp5Tk9Yb4Md6", "assigned_secret"],
  ["settings.py", 'DATABASE_PASSWORD = "Ab9xQ2mZr7Lk4Vt8Wn3P"', "assigned_secret"],
  ["main.go", 'apiKey := "e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8"', "assigned_secret"],
];

describe("secret scan: every shape, named by file and line, never by value", () => {
  for (const [file, text, rule] of PLANTED) {
    it(`${rule} in ${file}`, () => {
      const hits = scanNew(file, `// first line\n${text}\n// last line\n`);
      expect(hits).toEqual([{ path: file, line: 2, rule }]);
      const said = describeHit(hits[0]!);
      expect(said).toBe(`${file} line 2 (${rule})`);
      // no part of the planted line beyond its name survives into what is said
      const value = /[A-Za-z0-9_+/=-]{16,}/.exec(text.replace(/^[^=:(]*[=:(]\s*/, ""))?.[0] ?? text;
      expect(said).not.toContain(value);
    });
  }
});

describe("secret scan: only the ADDED lines of the diff", () => {
  const secret = 'API_TOKEN = "Hq3Vn8Lz2Wc7Rp5Tk9Yb4Md6"';
  it("a secret already in the baseline, on an unchanged line, is not the run's", () => {
    const before = `a\n${secret}\nb\n`;
    const after = `a\n${secret}\nb\nc\n`;
    expect(scanLines("x.py", addedLines(before, after))).toEqual([]);
  });

  it("a secret the run added is named at its line in the file as it is now", () => {
    const before = "a\nb\nc\n";
    const after = `a\nb\nnew\n${secret}\nc\n`;
    expect(addedLines(before, after)).toEqual([
      { line: 3, text: "new" },
      { line: 4, text: secret },
    ]);
    expect(scanLines("x.py", addedLines(before, after))).toEqual([{ path: "x.py", line: 4, rule: "assigned_secret" }]);
  });

  it("a line moved within the file was there before the run: not added; a second copy of it is", () => {
    const before = `a\n${secret}\nb\n`;
    expect(scanLines("x.py", addedLines(before, `a\nb\n${secret}\n`))).toEqual([]);
    expect(scanLines("x.py", addedLines(before, `a\n${secret}\nb\n${secret}\n`))).toEqual([{ path: "x.py", line: 4, rule: "assigned_secret" }]);
  });

  it("a line the run changed counts as added (an old harmless value replaced by a key)", () => {
    const before = 'API_TOKEN = ""\n';
    const after = `${secret}\n`;
    expect(scanLines("x.py", addedLines(before, after))).toEqual([{ path: "x.py", line: 1, rule: "assigned_secret" }]);
  });
});

describe("secret scan: ordinary code passes clean", () => {
  const sha512 = createHash("sha512").update("x").digest("base64");
  const sha256 = createHash("sha256").update("y").digest("hex");
  const b64 = Buffer.from(Array.from({ length: 96 }, (_, i) => (i * 37 + 11) % 256)).toString("base64");
  const ORDINARY: ReadonlyArray<[string, string]> = [
    [
      "package-lock.json",
      [
        '    "node_modules/ignore": {',
        '      "version": "7.0.17",',
        '      "resolved": "https://registry.npmjs.org/ignore/-/ignore-7.0.17.tgz",',
        `      "integrity": "sha512-${sha512}",`,
        '      "license": "MIT"',
      ].join("\n"),
    ],
    ["yarn.lock", `ignore@^7.0.0:\n  version "7.0.17"\n  integrity sha512-${sha512}\n`],
    [
      "go.sum",
      `golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=\ngolang.org/x/text v0.14.0/go.mod h1:18ZOQIKpY8NJVqYksKHtTdi31H5itFRjB5/qKTNYzSU=`,
    ],
    ["poetry.lock", `[[package]]\nname = "idna"\ncontent-hash = "${sha256}"`],
    ["tests/fixtures/blob.test.ts", `const PNG = "data:image/png;base64,${b64}";\nconst payload = Buffer.from("${b64}", "base64");`],
    ["tests/ids.test.ts", `const id = "${randomUUID()}";\nconst user_id = "${randomUUID()}";\nconst request_token_id = "${randomUUID()}";`],
    ["app/settings.py", 'password = os.environ["DB_PASSWORD"]\nAPI_KEY = os.environ.get("API_KEY")\nSECRET_KEY = env("SECRET_KEY")'],
    ["app/oauth.py", 'token_type = "bearer"\nresponse = {"access_token": token, "token_type": "bearer", "expires_in": 3600}'],
    [
      "src/client.ts",
      "headers: { Authorization: `Bearer $" + "{token}` },\nconst apiKey = process.env.OPENAI_API_KEY;\nconst token = await getToken();\nlet password: string;",
    ],
    ["src/cache.ts", 'const cacheKey = "users:list:v2:Page1";\nconst sortKey = "createdAtTimestamp1";\nconst primaryKey = "accountIdV2";'],
    ["src/names.ts", "const token = accessTokenV2FromCache;\nexport const DEFAULT_SIGNING_KEY = DefaultSigningKey2024;"],
    [".env.example", "API_KEY=your-api-key-here\nSECRET_KEY=changeme-in-production\nDB_PASSWORD=changeme123456789"],
    [".github/workflows/ci.yml", ["env:", "  NPM_TOKEN: $" + "{{ secrets.NPM_TOKEN }}", "  GITHUB_TOKEN: $" + "{{ secrets.GITHUB_TOKEN }}"].join("\n")],
    ["src/pem.js", "const re = /^-----BEGIN OPENSSH PRIVATE KEY-----(?:\\r\\n|\\n)([\\s\\S]+)/;\nlet out = '-----BEGIN OPENSSH PRIVATE KEY-----\\n';"],
    ["src/style.css", ".pk-table-header-cell { color: #a1b2c3; }\n/* sk-learn-compatible */"],
    ["docs/git.md", `commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nimage sha256:${sha256}`],
    ["src/usage.py", "max_tokens = 4096\nprompt_tokens: 12\npassword_min_length = 12"],
    ["README.md", "Set `OPENAI_API_KEY` in your environment; the secret is never logged. The bearer of this token ..."],
  ];
  for (const [file, text] of ORDINARY) {
    it(file, () => {
      expect(scanNew(file, text)).toEqual([]);
    });
  }
});

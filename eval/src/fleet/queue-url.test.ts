import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { connectionOptions, parseQueueUrl, redactQueueUrl } from "./queue-url.js";

const SECRET = "s3cr3t-canary-pw";

function refusal(text: string): { code: string; message: string } {
  try {
    parseQueueUrl(text);
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error(`accepted ${text}`);
}

describe("queue URL", () => {
  it("parses redis:// with a password, host, port and db, and shows it only redacted", () => {
    const t = parseQueueUrl(`redis://:${SECRET}@127.0.0.1:6390/3`);
    expect(t).toEqual({ tls: false, host: "127.0.0.1", port: 6390, db: 3, password: SECRET, display: "redis://***@127.0.0.1:6390/3" });
    expect(connectionOptions(t)).toEqual({ host: "127.0.0.1", port: 6390, db: 3, password: SECRET, maxRetriesPerRequest: null });
  });

  it("rediss:// turns TLS on; no password is allowed", () => {
    const t = parseQueueUrl("rediss://redis.example:6380/0");
    expect(t).toMatchObject({ tls: true, password: null, display: "rediss://redis.example:6380/0" });
    expect(connectionOptions(t).tls).toEqual({});
  });

  it("decodes a percent-encoded password", () => {
    expect(parseQueueUrl("redis://:a%40b%2Fc@h:1/0").password).toBe("a@b/c");
  });

  it.each([
    ["http://:pw@h:1/0", "scheme"],
    ["redis://h/0", "port"],
    ["redis://h:6379", "database"],
    ["redis://h:6379/x", "database"],
    ["redis://h:6379/16", "0..15"],
    ["redis://user:pw@h:6379/0", "user name"],
    ["redis://:pw@h:6379/0?tls=1", "query"],
    ["not a url", "not a URL"],
  ])("refuses %s with queue_url_invalid naming what is wrong", (text, why) => {
    const r = refusal(text);
    expect(r.code).toBe("queue_url_invalid");
    expect(r.message).toContain(why);
  });

  it("regression: a refused URL's message never holds its password", () => {
    for (const text of [`redis://:${SECRET}@h/0`, `redis://u:${SECRET}@h:1/0`, `http://:${SECRET}@h:1/0`, `redis://:${SECRET}@h:1/99`]) {
      const r = refusal(text);
      expect(r.message).not.toContain(SECRET);
      expect(r.message).toContain("***@");
    }
    expect(redactQueueUrl(`rediss://:${SECRET}@h:1/0`)).toBe("rediss://***@h:1/0");
  });
});

import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { isAuthRefusal, pingQueue } from "./queue-ping.js";

/**
 * BullMQ's handle as it behaves on a refused password: it never connects
 * (so never resolves) and reports each refusal as an `error` event. The
 * ping's timeout here is a minute, the test's limit 20 s: a ping that waited
 * for the timeout instead of failing on the refusal fails the test by its
 * limit, with no clock assertion of its own.
 */
const HOUR = 60_000;
const LIMIT = 20_000;
const never = new Promise<{ ping(): Promise<string> }>(() => undefined);

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  return { code: "ok", message: "" };
}

function refusing(reply: string): EventEmitter {
  const e = new EventEmitter();
  // the first attempt's error is just a connection reset (a refusal comes after it): only the refusal ends the wait
  setTimeout(() => e.emit("error", new Error("connect ECONNRESET")), 5);
  setTimeout(() => e.emit("error", new Error(reply)), 20);
  return e;
}

describe("pingQueue", () => {
  it(
    "regression: a wrong password fails at the first refusal with queue_auth_failed, not after the timeout as 'no answer'",
    async () => {
      const r = await codeOf(pingQueue(never, "redis://***@h:1/0", HOUR, refusing("WRONGPASS invalid username-password pair or user is disabled.")));
      expect(r.code).toBe("queue_auth_failed");
      expect(r.message).toBe("Redis at redis://***@h:1/0 refused the password (wrong password); check --queue-password-file or the password in --queue");
    },
    LIMIT,
  );

  it(
    "a Redis that wants a password when none was given (NOAUTH) is the same error, saying so",
    async () => {
      const r = await codeOf(pingQueue(never, "redis://h:1/0", HOUR, refusing("NOAUTH Authentication required.")));
      expect(r).toMatchObject({ code: "queue_auth_failed", message: expect.stringContaining("it requires one and none was given") });
    },
    LIMIT,
  );

  it("silence is queue_unreachable once the timeout ran out; other connection errors do not end the wait early", async () => {
    const e = new EventEmitter();
    setTimeout(() => e.emit("error", new Error("connect ECONNREFUSED 127.0.0.1:1")), 1);
    const r = await codeOf(pingQueue(never, "redis://***@h:1/0", 50, e));
    expect(r).toMatchObject({ code: "queue_unreachable", message: expect.stringContaining("no Redis answers at redis://***@h:1/0") });
    expect(e.listenerCount("error")).toBe(0);
  });

  it("a PONG is an answer", async () => {
    expect(await codeOf(pingQueue({ ping: async () => "PONG" }, "redis://h:1/0", HOUR, new EventEmitter()))).toEqual({ code: "ok", message: "" });
  });

  it("knows Redis' refusal codes by their first word only", () => {
    expect(isAuthRefusal(new Error("WRONGPASS invalid username-password pair"))).toBe(true);
    expect(isAuthRefusal(new Error("NOAUTH Authentication required."))).toBe(true);
    expect(isAuthRefusal(new Error("ERR invalid password"))).toBe(true);
    expect(isAuthRefusal(new Error("connect ECONNREFUSED; WRONGPASS later"))).toBe(false);
  });
});

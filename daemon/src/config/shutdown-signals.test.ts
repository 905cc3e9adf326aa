import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { shutdownSignalsOf } from "./shutdown-signals.js";

describe("shutdownSignalsOf", () => {
  it("calls the handler on SIGTERM and SIGINT, and the returned function removes both listeners", () => {
    const proc = new EventEmitter();
    const seen: string[] = [];
    const off = shutdownSignalsOf(proc)((s) => seen.push(s));
    proc.emit("SIGTERM", "SIGTERM");
    proc.emit("SIGINT", "SIGINT");
    expect(seen).toEqual(["SIGTERM", "SIGINT"]);
    off();
    expect([proc.listenerCount("SIGTERM"), proc.listenerCount("SIGINT")]).toEqual([0, 0]);
  });
});

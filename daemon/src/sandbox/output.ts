import { Writable } from "node:stream";

/**
 * Keeps the first `capBytes` of stdout+stderr together and drains (discards)
 * the rest, so a chatty process never blocks on a full pipe. `truncated`
 * records that something was dropped.
 */
export class CappedOutput {
  private readonly chunks: { stdout: Buffer[]; stderr: Buffer[] } = { stdout: [], stderr: [] };
  private kept = 0;
  truncated = false;
  readonly stdout: Writable;
  readonly stderr: Writable;

  constructor(private readonly capBytes: number) {
    this.stdout = this.sink("stdout");
    this.stderr = this.sink("stderr");
  }

  private sink(which: "stdout" | "stderr"): Writable {
    return new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.push(which, chunk);
        done();
      },
    });
  }

  push(which: "stdout" | "stderr", chunk: Buffer): void {
    const room = this.capBytes - this.kept;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.chunks[which].push(Buffer.from(part));
    this.kept += part.length;
  }

  /** The kept bytes as they came (a report file read back is data, not text). */
  bytes(which: "stdout" | "stderr"): Buffer {
    return Buffer.concat(this.chunks[which]);
  }

  text(which: "stdout" | "stderr"): string {
    return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(this.chunks[which]));
  }
}

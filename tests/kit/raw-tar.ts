/**
 * One raw ustar header block with a correct checksum, for tars no packer
 * would write (hostile names, sizes, types): the extractor's tests feed it
 * directly. `size` is the raw 12-byte field, so a base-256 size can be made.
 */
export function rawTarHeader(name: string, size: Buffer | string, opts: { type?: string; mode?: string; uid?: string; gid?: string } = {}): Buffer {
  const b = Buffer.alloc(512);
  b.write(name, 0);
  b.write(`${opts.mode ?? "0000644"} `, 100);
  b.write(`${opts.uid ?? "0000000"} `, 108);
  b.write(`${opts.gid ?? "0000000"} `, 116);
  (typeof size === "string" ? Buffer.from(size) : size).copy(b, 124);
  b.write("00000000000 ", 136);
  b.write(opts.type ?? "0", 156);
  b.write("ustar\u000000", 257, "latin1");
  b.fill(" ", 148, 156);
  let sum = 0;
  for (const x of b) sum += x;
  b.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, "latin1");
  return b;
}

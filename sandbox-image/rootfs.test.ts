import { describe, expect, it } from "vitest";
import { dockerfile, parseLdd } from "./rootfs.js";
import { IMAGE_DEFINITIONS } from "./definitions.js";

describe("rootfs assembly", () => {
  it("takes exactly the files ldd names, including the loader, and skips the vdso", () => {
    const out = `\tlinux-vdso.so.1 (0x00007ffd)\n\tlibdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x1)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x2)\n\t/lib64/ld-linux-x86-64.so.2 (0x3)\n`;
    expect(parseLdd(out)).toEqual(["/lib/x86_64-linux-gnu/libdl.so.2", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]);
  });

  it("the Dockerfile is FROM scratch, non-root, and has nothing that varies per build", () => {
    const df = dockerfile(IMAGE_DEFINITIONS.node);
    expect(df.startsWith("FROM scratch\n")).toBe(true);
    expect(df).toContain("USER 65534:65534");
    expect(df).not.toMatch(/LABEL|ARG|RUN|ADD http/);
    expect(dockerfile(IMAGE_DEFINITIONS.node)).toBe(df);
  });
});

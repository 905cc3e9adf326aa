import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assembleContext, dockerfile, parseLdconfig, parseLdd, pathPrograms } from "./rootfs.js";
import { IMAGE_DEFINITIONS, SANDBOX_FAMILIES } from "./definitions.js";

describe("rootfs assembly", () => {
  it("names the programs on the image's PATH (files and links, not folders; a PATH folder it lacks has none) for its label", async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "pathprog-"));
    try {
      await fs.mkdir(path.join(root, "usr/bin/sub"), { recursive: true });
      await fs.writeFile(path.join(root, "usr/bin/node"), "");
      await fs.symlink("node", path.join(root, "usr/bin/nodejs"));
      expect(await pathPrograms(root, "/usr/local/bin:/usr/bin:/bin")).toEqual(["node", "nodejs"]);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

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

  it("leaves excluded subtrees out, copies what the tree's ELF files load, and makes the links", async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-rootfs-"));
    try {
      const tree = path.join(tmp, "host/tool");
      await fs.mkdir(path.join(tree, "bin"), { recursive: true });
      await fs.mkdir(path.join(tree, "test"), { recursive: true });
      // a dynamically linked ELF file (the test runner's own node) and a file that must not go in
      await fs.copyFile(process.execPath, path.join(tree, "bin/tool"));
      await fs.writeFile(path.join(tree, "test/huge.txt"), "x");
      const ctx = path.join(tmp, "ctx");
      await assembleContext(
        {
          ...IMAGE_DEFINITIONS["node-base"],
          binaries: [],
          trees: [[tree, "/opt/tool"]],
          exclude: [path.join(tree, "test")],
          libraryClosureOf: [tree],
          symlinks: [["/usr/bin/tool", "/opt/tool/bin/tool"]],
        },
        ctx,
      );
      const rootfs = path.join(ctx, "rootfs");
      expect((await fs.stat(path.join(rootfs, "opt/tool/bin/tool"))).isFile()).toBe(true);
      await expect(fs.stat(path.join(rootfs, "opt/tool/test"))).rejects.toThrow();
      expect(await fs.readlink(path.join(rootfs, "usr/bin/tool"))).toBe("/opt/tool/bin/tool");
      // the loader and libc of whatever `ldd` names for the ELF file
      const libs = parseLdd(execFileSync("ldd", [process.execPath], { encoding: "utf8" }));
      expect(libs.length).toBeGreaterThan(0);
      for (const lib of libs) expect((await fs.stat(path.join(rootfs, lib))).isFile()).toBe(true);
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });

  it("every sandbox family carries the static spawner, relay and probes, and the python and go families ask for no pip and no fetch", () => {
    for (const family of SANDBOX_FAMILIES) {
      expect(IMAGE_DEFINITIONS[family].staticHelpers.map(([, dest]) => dest)).toEqual(
        expect.arrayContaining(["/opt/mini-agent/spawner", "/opt/mini-agent/run", "/opt/mini-agent/probe", "/opt/mini-agent/syscall-probe"]),
      );
      expect(IMAGE_DEFINITIONS[family].cmd).toEqual(["/opt/mini-agent/spawner"]);
    }
    expect(IMAGE_DEFINITIONS.python.exclude).toContain("/usr/lib/python3.11/ensurepip");
    expect(IMAGE_DEFINITIONS.python.trees.map(([src]) => src).some((s) => /pip/.test(path.basename(s)))).toBe(false);
    expect(IMAGE_DEFINITIONS.python.env).toMatchObject({ PYTHONDONTWRITEBYTECODE: "1" });
    expect(IMAGE_DEFINITIONS.go.env).toMatchObject({ GOPROXY: "off", GOSUMDB: "off", GOTOOLCHAIN: "local", CGO_ENABLED: "0" });
    expect(IMAGE_DEFINITIONS.go.env.GOFLAGS ?? "").not.toMatch(/-mod=/);
  });

  it("finds a library by soname where the host's loader does (ldconfig -p), the 64-bit one", () => {
    const out =
      "3 libs found in cache\n\tlibrt.so.1 (libc6) => /lib/i386-linux-gnu/librt.so.1\n\tlibrt.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/librt.so.1\n\tlibm.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libm.so.6\n";
    expect(parseLdconfig(out, "librt.so.1")).toBe("/lib/x86_64-linux-gnu/librt.so.1");
    expect(parseLdconfig(out, "libnope.so.1")).toBeNull();
  });

  it("the node family carries what native test tooling loads (librt for vitest's rolldown binding), and a patch that does not apply fails the build", async () => {
    expect(IMAGE_DEFINITIONS.node.libraries).toEqual(expect.arrayContaining(["librt.so.1", "libstdc++.so.6", "libgcc_s.so.1"]));
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-rootfs-"));
    try {
      const file = path.join(tmp, "host.txt");
      await fs.writeFile(file, "old line\n");
      const def = { ...IMAGE_DEFINITIONS["node-base"], binaries: [], trees: [[file, "/opt/f.txt"]] as Array<[string, string]> };
      await assembleContext({ ...def, patches: [{ file: "/opt/f.txt", from: "old", to: "new" }] }, path.join(tmp, "ok"));
      expect(await fs.readFile(path.join(tmp, "ok/rootfs/opt/f.txt"), "utf8")).toBe("new line\n");
      await expect(assembleContext({ ...def, patches: [{ file: "/opt/f.txt", from: "absent", to: "x" }] }, path.join(tmp, "bad"))).rejects.toMatchObject({
        code: "sandbox_error",
      });
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LAYER_LIMITS } from "../workspace/index.js";
import { resolveSandboxConfig } from "./config.js";
import { certificatesOf, INSTALL_MEMORY_BYTES, installKindFor, installMountShape, installMounts, installSandboxConfig } from "./install-sandbox.js";
import { familyInstallKind, IN_INSTALL, type InstallTool, installPlan } from "./install-tools.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-ca-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVBdXRob3JpdHkwCgYIKoZIzj0EAwIw\nAAECAwQ=\n-----END CERTIFICATE-----";
const KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----";
const write = (name: string, text: string | Buffer) => {
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};

describe("the CA certificates an install sandbox trusts", () => {
  it("regression: npm in the install sandbox failed with SELF_SIGNED_CERT_IN_CHAIN on a network that re-signs TLS; the host's extra CA certificates go in, and only they", () => {
    const bundle = write("bundle.pem", `# a comment\n${CERT}\n${KEY}\n${CERT.replace("AAECAwQ=", "BQYHCAk=")}\n`);
    const out = certificatesOf(bundle);
    expect(out).not.toBeNull();
    expect(out!.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(out).not.toContain("PRIVATE KEY");
    expect(out).not.toContain("# a comment");
  });

  it("a file with no certificate, a folder, a missing file or one over 4 MiB gives none", () => {
    expect(certificatesOf(write("key.pem", `${KEY}\n`))).toBeNull();
    expect(certificatesOf(dir)).toBeNull();
    expect(certificatesOf(path.join(dir, "absent.pem"))).toBeNull();
    expect(certificatesOf(write("huge.pem", Buffer.concat([Buffer.from(`${CERT}\n`), Buffer.alloc(5 << 20, 32)])))).toBeNull();
  });
});

describe("what each tool's install sandbox runs (install-tools.ts)", () => {
  it("pip: the image's python makes the venv first, pip reads no config file of the sandbox's and writes no .pyc (a .pyc's time stamp would give every install a new layer key)", () => {
    const plan = installPlan(
      { kind: "pip", index: "http://127.0.0.1:9/simple/", extra: ["https://extra.example/simple/"] },
      "pip install -r requirements.txt",
      null,
    );
    expect(plan.folder).toBe(".venv");
    expect(plan.script).toBe("/usr/bin/python3 -m venv --without-pip /workspace/.venv || exit $?\npip install -r requirements.txt");
    expect(plan.env).toMatchObject({
      PIP_INDEX_URL: "http://127.0.0.1:9/simple/",
      PIP_EXTRA_INDEX_URL: "https://extra.example/simple/",
      PIP_TRUSTED_HOST: "127.0.0.1:9",
      PIP_CONFIG_FILE: "/dev/null",
      PIP_NO_COMPILE: "1",
    });
    expect(plan.launch(3128, "/s").slice(0, 2)).toEqual(["/usr/bin/python3", "-I"]);
  });

  it("go: the command's module cache becomes vendor/ offline (GOPROXY=off), in a folder that is not the mount point `go mod vendor` would try to remove", () => {
    const plan = installPlan(
      { kind: "go", goproxy: "https://proxy.example", gosumdb: "sum.golang.org", gonosumdb: "", goflags: "" },
      "go mod download",
      "/ca.pem",
    );
    expect(plan.folder).toBe("vendor");
    expect(plan.mountAt).not.toBe("/workspace/vendor");
    expect(plan.resultPath).toBe(`${plan.mountAt}/vendor`);
    expect(plan.script).toMatch(/^go mod download\n[\s\S]*\nGOPROXY=off go mod vendor -o \/opt\/mini-agent-install-out\/vendor$/);
    expect(plan.env).toEqual({
      GOPROXY: "https://proxy.example",
      GOSUMDB: "sum.golang.org",
      GOMODCACHE: `${IN_INSTALL.cache}/go-mod`,
      GOCACHE: `${IN_INSTALL.cache}/go-build`,
      GOFLAGS: "-buildvcs=false",
      SSL_CERT_FILE: "/ca.pem",
    });
  });
});

describe("where an install's downloads go", () => {
  const mib = (o: Record<string, string> | undefined) => Number(/size=(\d+)/.exec(o?.o ?? "")?.[1] ?? 0) / (1024 * 1024);
  const TOOLS: InstallTool[] = [
    { kind: "npm", registry: "http://127.0.0.1:9/" },
    { kind: "pip", index: "http://127.0.0.1:9/simple/", extra: [] },
    { kind: "go", goproxy: "http://127.0.0.1:9", gosumdb: "off", gonosumdb: "", goflags: "" },
  ];

  it("regression: npm's cache in the sandbox's 64 MiB /tmp ended an install of more than 64 MiB of tarballs with ENOSPC; every tool's caches go to a writable tmpfs of their own, as large as a layer", () => {
    for (const tool of TOOLS) {
      const plan = installPlan(tool, "true", null);
      const caches = Object.entries(plan.env).filter(([k]) => /cache/i.test(k));
      expect(caches.length, tool.kind).toBeGreaterThan(0);
      for (const [k, v] of caches) expect(v.startsWith(`${IN_INSTALL.cache}/`), `${tool.kind} ${k}=${v}`).toBe(true);
      expect(
        Object.values(plan.env).some((v) => v.startsWith("/tmp/")),
        tool.kind,
      ).toBe(false);
      const cache = installMounts(tool.kind, plan, { sock: "/s", tools: "/t", npmRoot: "/n", pipRoot: "/p" }, {}).find((m) => m.Target === IN_INSTALL.cache);
      expect(cache?.ReadOnly, tool.kind).toBe(false);
      expect(cache?.VolumeOptions?.DriverConfig?.Options?.o).toContain("uid=65534");
      expect(mib(cache?.VolumeOptions?.DriverConfig?.Options)).toBe(LAYER_LIMITS.maxBytes / (1024 * 1024));
    }
  });
});

describe("which install sandbox a family has (install-tools.ts INSTALL_KIND_OF)", () => {
  // Regression: only node's install sandbox was known (INSTALL_FAMILIES = ["node"]), so pip's and Go's were never probed.
  it("node installs with npm, python with pip, go with Go, a custom family with its base's tool; under runsc none", () => {
    const kind = (imageFamily: string, familyBase: "node" | "python" | "go" | null = null, runtime = "runc") =>
      installKindFor({ ...resolveSandboxConfig({ imageFamily, familyBase }), runtime: runtime as "runc" | "runsc" });
    expect([kind("node"), kind("python"), kind("go")]).toEqual(["npm", "pip", "go"]);
    expect(kind("pylint", "python")).toBe("pip");
    expect(kind("golint", "go")).toBe("go");
    // a family the daemon knows no base of has no install sandbox (the executor's preflight says why)
    expect(kind("nosuch")).toBeNull();
    expect(kind("python", null, "runsc")).toBeNull();
    expect(familyInstallKind({ imageFamily: "python", familyBase: null })).toBe("pip");
  });

  it("each kind's mounts in the hash are the ones its install makes: its own result volume and, for npm and pip, the tool's read-only bind", () => {
    const targets = (k: "npm" | "pip" | "go") => installMountShape(k).map((m) => `${m.Type}:${m.Target}:${m.ReadOnly ? "ro" : "rw"}`);
    const common = [`volume:${IN_INSTALL.cache}:rw`, `bind:${IN_INSTALL.egress}:ro`, `bind:${IN_INSTALL.tools}:ro`];
    expect(targets("pip")).toEqual(["volume:/workspace/.venv:rw", ...common, `bind:${IN_INSTALL.pip}/pip:ro`]);
    expect(targets("go")).toEqual([`volume:${IN_INSTALL.out}:rw`, ...common]);
  });
});

describe("the install sandbox's memory limit", () => {
  it("regression: the install ran under the test sandbox's 512 MiB, which its tmpfs folder and download cache count against, and a real npm install was OOM-killed (exit 137); it now holds both at their size limit and room for the package manager", () => {
    const family = resolveSandboxConfig({});
    const install = installSandboxConfig(family);
    expect(family.memoryBytes).toBe(512 * 1024 * 1024);
    expect(install.memoryBytes).toBe(INSTALL_MEMORY_BYTES);
    expect(INSTALL_MEMORY_BYTES).toBeGreaterThanOrEqual(2 * LAYER_LIMITS.maxBytes + 512 * 1024 * 1024);
    // nothing else of the family's configuration changes, and a family that allows more keeps its own
    expect({ ...install, memoryBytes: family.memoryBytes }).toEqual(family);
    expect(installSandboxConfig(resolveSandboxConfig({ memoryBytes: 8 * 1024 ** 3 })).memoryBytes).toBe(8 * 1024 ** 3);
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { certificatesOf } from "./install-sandbox.js";

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

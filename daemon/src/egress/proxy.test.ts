import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isAllowed, parseAllowHost } from "./allowlist.js";
import { EgressProxy } from "./proxy.js";
import { goProxyConfig } from "./go-config.js";
import { indexOfPipConf, pipIndex } from "./pip-config.js";
import { npmRegistry, npmrcHasAuth, registryOfNpmrc } from "./registry-config.js";

const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "egress-"));
  dirs.push(d);
  return d;
};

/** a real upstream on 127.0.0.1 port 0 */
async function upstream(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url} auth=${req.headers["proxy-authorization"] ?? "-"}`);
    res.end("upstream says hi");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as net.AddressInfo).port, hits };
}

/** one raw exchange with the proxy on its Unix socket; resolves with what came back until it closed or `until` matched */
function exchange(sock: string, text: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(sock);
    let got = "";
    c.on("data", (d) => {
      got += d.toString();
      if (until?.test(got)) {
        c.destroy();
        resolve(got);
      }
    });
    c.on("end", () => resolve(got));
    c.on("close", () => resolve(got));
    c.on("error", reject);
    c.write(text);
  });
}

async function proxyWith(allow: string[], dialled: string[]) {
  const sock = path.join(tmp(), "p.sock");
  const proxy = await EgressProxy.listen(sock, {
    allow: allow.map(parseAllowHost),
    connect: (host, port) => {
      dialled.push(`${host}:${port}`);
      return net.connect({ host, port });
    },
  });
  closers.push(() => proxy.close());
  return { sock, proxy };
}

describe("egress proxy", () => {
  it("refuses a CONNECT to an unlisted name with 403 and its reason, and never dials it (not even a lookup)", async () => {
    const dialled: string[] = [];
    const { sock, proxy } = await proxyWith(["127.0.0.1:4873"], dialled);
    const got = await exchange(sock, "CONNECT never-resolved.invalid:443 HTTP/1.1\r\nHost: never-resolved.invalid:443\r\n\r\n");
    expect(got).toMatch(/^HTTP\/1\.1 403 /);
    expect(got).toContain("never-resolved.invalid:443 is not an allowed package host (allowed: 127.0.0.1:4873)");
    expect(dialled).toEqual([]);
    expect(proxy.refusals).toEqual([expect.objectContaining({ verdict: "refused", host: "never-resolved.invalid", port: 443, method: "CONNECT" })]);
  });

  it("refuses a listed name on another port (a listed host is no wildcard for its ports) and a look-alike name", async () => {
    const dialled: string[] = [];
    const { sock } = await proxyWith(["registry.example:443"], dialled);
    expect(await exchange(sock, "CONNECT registry.example:22 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 403 /);
    expect(await exchange(sock, "CONNECT registry.example.evil.invalid:443 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 403 /);
    expect(await exchange(sock, "GET http://registry.example:80/x HTTP/1.1\r\nHost: registry.example\r\nConnection: close\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 403 /,
    );
    expect(dialled).toEqual([]);
  });

  it("tunnels a CONNECT to a listed host:port and relays both ways", async () => {
    const up = await upstream();
    const dialled: string[] = [];
    const { sock, proxy } = await proxyWith([`127.0.0.1:${up.port}`], dialled);
    const got = await exchange(
      sock,
      `CONNECT 127.0.0.1:${up.port} HTTP/1.1\r\n\r\nGET /through HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      /upstream says hi/,
    );
    expect(got).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(got).toContain("upstream says hi");
    expect(dialled).toEqual([`127.0.0.1:${up.port}`]);
    expect(up.hits).toEqual(["GET /through auth=-"]);
    expect(proxy.refusals).toEqual([]);
  });

  it("forwards an absolute-URI http request to a listed host without the proxy's own headers", async () => {
    const up = await upstream();
    const dialled: string[] = [];
    const { sock } = await proxyWith([`127.0.0.1:${up.port}`], dialled);
    const got = await exchange(
      sock,
      `GET http://127.0.0.1:${up.port}/pkg?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\nProxy-Authorization: Basic c2VjcmV0\r\nConnection: close\r\n\r\n`,
    );
    expect(got).toMatch(/^HTTP\/1\.1 200 /);
    expect(got).toContain("upstream says hi");
    expect(up.hits).toEqual(["GET /pkg?x=1 auth=-"]);
  });

  it("answers 400 to a request that names no absolute http URL, and dials nothing", async () => {
    const dialled: string[] = [];
    const { sock } = await proxyWith(["127.0.0.1:1"], dialled);
    expect(await exchange(sock, "GET /relative HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /);
    expect(await exchange(sock, "CONNECT nonsense HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /);
    expect(dialled).toEqual([]);
  });
});

describe("allowlist", () => {
  it("reads HOST, HOST:PORT and [v6]:PORT; 443 when no port is given", () => {
    expect(parseAllowHost("Registry.Example")).toEqual({ host: "registry.example", port: 443 });
    expect(parseAllowHost("127.0.0.1:4873")).toEqual({ host: "127.0.0.1", port: 4873 });
    expect(parseAllowHost("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
  });

  it("refuses what is no host (invalid_request, naming the flag and the form to use)", () => {
    for (const bad of ["", "a b", "host:0", "host:70000", "http://x", "*.example", "x..y"]) {
      expect(() => parseAllowHost(bad)).toThrow(
        expect.objectContaining({ code: "invalid_request", message: expect.stringContaining("use HOST or HOST:PORT") }),
      );
    }
  });

  it("matches exactly: name and port, case-insensitive, no suffix match", () => {
    const list = [parseAllowHost("registry.example")];
    expect(isAllowed(list, "REGISTRY.example", 443)).toBe(true);
    expect(isAllowed(list, "registry.example", 80)).toBe(false);
    expect(isAllowed(list, "x.registry.example", 443)).toBe(false);
  });
});

describe("npm registry configuration, read as data", () => {
  it("takes the last registry= line, ignores comments and scoped registries, and sees an auth entry", () => {
    const text =
      "; registry=http://commented/\n@scope:registry=http://scoped/\nregistry=http://first/\nregistry = http://127.0.0.1:4873/\n//127.0.0.1:4873/:_authToken=x\n";
    expect(registryOfNpmrc(text)).toBe("http://127.0.0.1:4873/");
    expect(npmrcHasAuth(text)).toBe(true);
    expect(npmrcHasAuth("registry=http://x/\n")).toBe(false);
  });

  it("the workspace's .npmrc wins over the user's, which wins over npm's default; a linked .npmrc is not read", () => {
    const ws = tmp();
    const home = tmp();
    expect(npmRegistry(ws, home)).toEqual({ url: "https://registry.npmjs.org/", from: "default", authDropped: false });
    fs.writeFileSync(path.join(home, ".npmrc"), "registry=https://home.example/\n");
    expect(npmRegistry(ws, home)).toMatchObject({ url: "https://home.example/", from: path.join(home, ".npmrc") });
    fs.symlinkSync(path.join(home, ".npmrc"), path.join(ws, ".npmrc"));
    expect(npmRegistry(ws, home).from).toBe(path.join(home, ".npmrc"));
    fs.rmSync(path.join(ws, ".npmrc"));
    fs.writeFileSync(path.join(ws, ".npmrc"), "registry=http://ws.example/\n//ws.example/:_authToken=t\n");
    expect(npmRegistry(ws, home)).toEqual({ url: "http://ws.example/", from: path.join(ws, ".npmrc"), authDropped: true });
  });
});

describe("pip index configuration, read as data", () => {
  it("a requirements file's --index-url wins over PIP_INDEX_URL, which wins over the user's pip.conf, which wins over PyPI", () => {
    const ws = tmp();
    const home = tmp();
    expect(pipIndex(ws, home, {})).toEqual({ url: "https://pypi.org/simple/", extra: [], from: "default", authDropped: false });
    fs.mkdirSync(path.join(home, ".config", "pip"), { recursive: true });
    fs.writeFileSync(
      path.join(home, ".config", "pip", "pip.conf"),
      "[global]\nindex-url = https://home.example/simple\nextra-index-url =\n  https://a.example/simple\n  https://b.example/simple\n",
    );
    expect(pipIndex(ws, home, {})).toMatchObject({
      url: "https://home.example/simple",
      extra: ["https://a.example/simple", "https://b.example/simple"],
      from: path.join(home, ".config", "pip", "pip.conf"),
    });
    expect(pipIndex(ws, home, { PIP_INDEX_URL: "https://env.example/simple/" })).toMatchObject({ url: "https://env.example/simple/", from: "PIP_INDEX_URL" });
    fs.writeFileSync(path.join(ws, "requirements.txt"), "--index-url http://127.0.0.1:8080/simple/\ntinywheel==1.0\n");
    expect(pipIndex(ws, home, { PIP_INDEX_URL: "https://env.example/simple/" })).toMatchObject({
      url: "http://127.0.0.1:8080/simple/",
      from: path.join(ws, "requirements.txt"),
    });
  });

  it("an index URL's user:password from the user's configuration is removed and said so (authenticated indexes are not supported yet)", () => {
    const got = pipIndex(tmp(), null, { PIP_INDEX_URL: "https://user:s3cret@private.example/simple/" });
    expect(got).toEqual({ url: "https://private.example/simple/", extra: [], from: "PIP_INDEX_URL", authDropped: true });
    expect(JSON.stringify(got)).not.toContain("s3cret");
  });

  it("regression: a requirements file whose index URL holds a password is refused (invalid_workspace): pip reads that file in the sandbox, so the password would have gone in with it", () => {
    const ws = tmp();
    fs.writeFileSync(path.join(ws, "requirements.txt"), "-i https://user:s3cret@private.example/simple/\nx\n");
    expect(() => pipIndex(ws, null, {})).toThrow(
      expect.objectContaining({ code: "invalid_workspace", message: expect.stringContaining("authenticated indexes are not supported yet") }),
    );
  });

  it("reads only the [global] and [install] sections of a pip.conf, and no comment", () => {
    expect(indexOfPipConf("[download]\nindex-url = http://no/\n[global]\n# index-url = http://commented/\nindex-url=http://yes/\n")).toEqual({
      url: "http://yes/",
      extra: [],
    });
  });
});

describe("Go module proxy configuration, read as data", () => {
  it("the environment wins over Go's env file, which wins over Go's default; `direct` is left out and said so, and the checksum database is allowed too", () => {
    const xdg = tmp();
    expect(goProxyConfig(null, { XDG_CONFIG_HOME: xdg })).toMatchObject({
      goproxy: "https://proxy.golang.org",
      from: "default",
      hosts: [
        { host: "proxy.golang.org", port: 443 },
        { host: "sum.golang.org", port: 443 },
      ],
      notes: [expect.stringContaining("`direct` was left out")],
    });
    fs.mkdirSync(path.join(xdg, "go"));
    fs.writeFileSync(path.join(xdg, "go", "env"), "GOPROXY=http://0.0.0.0:3000|https://mirror.example\nGOSUMDB=off\nGOPRIVATE=corp.example\n");
    expect(goProxyConfig(null, { XDG_CONFIG_HOME: xdg })).toMatchObject({
      goproxy: "http://0.0.0.0:3000,https://mirror.example",
      from: path.join(xdg, "go", "env"),
      hosts: [
        { host: "0.0.0.0", port: 3000 },
        { host: "mirror.example", port: 443 },
      ],
      gosumdb: "off",
      gonosumdb: "corp.example",
    });
    expect(goProxyConfig(null, { XDG_CONFIG_HOME: xdg, GOPROXY: "https://env.example" })).toMatchObject({ goproxy: "https://env.example", from: "GOPROXY" });
  });

  it("refuses a GOPROXY that names no proxy (only direct, or off) or a loopback one, naming why (invalid_request)", () => {
    for (const [goproxy, why] of [
      ["direct", "fetches from version control"],
      ["off", "turns module downloads off"],
      ["http://127.0.0.1:3000,direct", "names a loopback address"],
      ["file:///srv/mods", "is not an http(s) URL"],
    ] as const) {
      expect(() => goProxyConfig(null, { GOPROXY: goproxy, GOENV: "off" })).toThrow(
        expect.objectContaining({ code: "invalid_request", message: expect.stringContaining(why) }),
      );
    }
  });
});

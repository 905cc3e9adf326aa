/**
 * The egress check that runs INSIDE the install sandbox, under the image's node,
 * behind the install's forwarder (install-probes.ts): kept as text, like the
 * forwarder, so nothing is added to the sandbox's mounts to run it. It only
 * observes and prints one JSON line; the host judges.
 */
export interface EgressCheckParams {
  /** the port of the host's allowed server on ITS 127.0.0.1 */
  hostPort: number;
  nonce: string;
}

export interface EgressCheckOutput {
  allowed: { status: number | string; body_is_nonce: boolean };
  refused: { connect: number | string; get: number | string };
  /** target -> "connected" or the error code */
  direct: Record<string, string>;
}

/** `.invalid` (RFC 6761) resolves nowhere: even a lookup of it could not reach anything. */
export const UNLISTED_NAME = "unlisted.invalid";

export const EGRESS_CHECK_SOURCE = `"use strict";
const net = require("node:net");
const { hostPort, nonce } = JSON.parse(process.argv[1]);
const PROXY = 3128;
function raw(request) {
  return new Promise((resolve) => {
    const s = net.connect(PROXY, "127.0.0.1");
    let data = "";
    s.setTimeout(10000, () => s.destroy(new Error("ETIMEDOUT")));
    s.on("connect", () => s.write(request));
    s.on("data", (d) => { data += d; });
    s.on("close", () => resolve(data));
    s.on("end", () => s.end());
    s.on("error", (e) => resolve("error " + (e.code || e.message)));
  });
}
const statusOf = (text) => { const m = /^HTTP\\/1\\.[01] (\\d{3})/.exec(text); return m ? Number(m[1]) : text.slice(0, 80); };
function direct(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 3000 });
    s.on("connect", () => { s.destroy(); resolve("connected"); });
    s.on("timeout", () => { s.destroy(); resolve("ETIMEDOUT"); });
    s.on("error", (e) => resolve(e.code || e.message));
  });
}
(async () => {
  const got = await raw("GET http://127.0.0.1:" + hostPort + "/egress-probe HTTP/1.1\\r\\nHost: 127.0.0.1:" + hostPort + "\\r\\nConnection: close\\r\\n\\r\\n");
  // the proxy relays the server's answer chunked: the nonce is inside the body, framed
  const body = got.split("\\r\\n\\r\\n").slice(1).join("\\r\\n\\r\\n");
  const connect = await raw("CONNECT ${UNLISTED_NAME}:443 HTTP/1.1\\r\\nHost: ${UNLISTED_NAME}:443\\r\\n\\r\\n");
  const get = await raw("GET http://${UNLISTED_NAME}/ HTTP/1.1\\r\\nHost: ${UNLISTED_NAME}\\r\\nConnection: close\\r\\n\\r\\n");
  const out = {
    allowed: { status: statusOf(got), body_is_nonce: body.includes(nonce) },
    refused: { connect: statusOf(connect), get: statusOf(get) },
    direct: {
      "192.0.2.1:80": await direct("192.0.2.1", 80),
      ["172.17.0.1:" + hostPort]: await direct("172.17.0.1", hostPort),
      ["127.0.0.1:" + hostPort]: await direct("127.0.0.1", hostPort),
    },
  };
  process.stdout.write(JSON.stringify(out) + "\\n");
})();
`;

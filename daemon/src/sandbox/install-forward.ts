/**
 * The forwarder that runs INSIDE the install sandbox, under the image's node
 * (install-sandbox.ts writes it into the sandbox's read-only tools folder).
 * The sandbox has only `lo`: this relays each connection to 127.0.0.1:PORT
 * to the daemon's egress proxy on the bind-mounted Unix socket, then runs the
 * install command and exits with its status. Kept as text so the built daemon
 * carries it without a copy step.
 */
export const FORWARDER_SOURCE = `"use strict";
const net = require("node:net");
const { spawn } = require("node:child_process");
const os = require("node:os");

const [port, socketPath, ...argv] = process.argv.slice(2);
const server = net.createServer((c) => {
  const up = net.connect(socketPath);
  c.pipe(up);
  up.pipe(c);
  c.on("error", () => up.destroy());
  up.on("error", () => c.destroy());
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
  child.on("error", (err) => {
    process.stderr.write(\`mini-agent install: \${err.message}\\n\`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    server.close();
    process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
  });
});
`;

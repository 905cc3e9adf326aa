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

/**
 * The same forwarder for the python family's image, which has no node: run
 * by the image's python (-I: the install's PYTHONPATH is not the forwarder's).
 */
export const FORWARDER_PY_SOURCE = `import os, socket, subprocess, sys, threading

port, path, *argv = sys.argv[1:]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(port)))
srv.listen(64)


def pipe(src, dst, done):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    # the second direction to finish closes both
    if done.acquire(blocking=False) is False:
        src.close()
        dst.close()


def serve():
    while True:
        c, _ = srv.accept()
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(path)
        except OSError:
            c.close()
            continue
        done = threading.Lock()
        threading.Thread(target=pipe, args=(c, up, done), daemon=True).start()
        threading.Thread(target=pipe, args=(up, c, done), daemon=True).start()


threading.Thread(target=serve, daemon=True).start()
try:
    code = subprocess.call(argv)
except OSError as e:
    sys.stderr.write("mini-agent install: %s\\n" % e)
    code = 127
sys.stdout.flush()
os._exit(code if code >= 0 else 128 - code)
`;

/**
 * The same forwarder for the go family's image, which has neither node nor
 * python: built inside the install sandbox by the image's go (GOPATH mode, so
 * the workspace's go.mod plays no part) before the install runs.
 */
export const FORWARDER_GO_SOURCE = `package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
)

func relay(c net.Conn, sock string) {
	up, err := net.Dial("unix", sock)
	if err != nil {
		c.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); up.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, up); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
	c.Close()
	up.Close()
}

func main() {
	port, sock, argv := os.Args[1], os.Args[2], os.Args[3:]
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		os.Stderr.WriteString("mini-agent install: " + err.Error() + "\\n")
		os.Exit(127)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relay(c, sock)
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				os.Exit(128 + int(ws.Signal()))
			}
			os.Exit(ee.ExitCode())
		}
		os.Stderr.WriteString("mini-agent install: " + err.Error() + "\\n")
		os.Exit(127)
	}
}
`;

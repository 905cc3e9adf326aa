/**
 * The egress check in each install sandbox's language (egress-check.ts is its
 * contract): node for npm, python for pip, Go for go. Each asks the proxy
 * (through the forwarder on 127.0.0.1:3128) for the allowed host's server,
 * CONNECTs and GETs a name not on the list, connects directly to three
 * addresses, and prints one JSON line of what it saw. Kept as text, like the
 * forwarders, so the built probes carry them without a copy step.
 */
/** `.invalid` (RFC 6761) resolves nowhere: even a lookup of it could not reach anything. */
export const UNLISTED_NAME = "unlisted.invalid";
const UNLISTED = UNLISTED_NAME;

const CONNECT_REQ = `CONNECT ${UNLISTED}:443 HTTP/1.1\\r\\nHost: ${UNLISTED}:443\\r\\n\\r\\n`;
const GET_REQ = `GET http://${UNLISTED}/ HTTP/1.1\\r\\nHost: ${UNLISTED}\\r\\nConnection: close\\r\\n\\r\\n`;

export const EGRESS_CHECK_JS = `"use strict";
const net = require("node:net");
const { hostPort, nonce } = JSON.parse(process.argv[2]);
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
  const connect = await raw("${CONNECT_REQ}");
  const get = await raw("${GET_REQ}");
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

export const EGRESS_CHECK_PY = `import errno, json, re, socket, sys

params = json.loads(sys.argv[1])
host_port, nonce = params["hostPort"], params["nonce"]
PROXY = 3128


def code(e):
    if isinstance(e, socket.timeout):
        return "ETIMEDOUT"
    return errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)


def raw(request):
    data = b""
    try:
        s = socket.create_connection(("127.0.0.1", PROXY), timeout=10)
    except OSError as e:
        return "error " + code(e)
    try:
        s.sendall(request.encode("latin-1"))
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError as e:
        if not data:
            return "error " + code(e)
    finally:
        s.close()
    return data.decode("latin-1")


def status_of(text):
    m = re.match(r"HTTP/1\\.[01] (\\d{3})", text)
    return int(m.group(1)) if m else text[:80]


def direct(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "connected"
    except OSError as e:
        return code(e)


got = raw("GET http://127.0.0.1:%d/egress-probe HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nConnection: close\\r\\n\\r\\n" % (host_port, host_port))
body = "\\r\\n\\r\\n".join(got.split("\\r\\n\\r\\n")[1:])
connect = raw("${CONNECT_REQ}")
get = raw("${GET_REQ}")
out = {
    "allowed": {"status": status_of(got), "body_is_nonce": nonce in body},
    "refused": {"connect": status_of(connect), "get": status_of(get)},
    "direct": {
        "192.0.2.1:80": direct("192.0.2.1", 80),
        "172.17.0.1:%d" % host_port: direct("172.17.0.1", host_port),
        "127.0.0.1:%d" % host_port: direct("127.0.0.1", host_port),
    },
}
sys.stdout.write(json.dumps(out) + "\\n")
`;

export const EGRESS_CHECK_GO = `package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var names = map[syscall.Errno]string{
	syscall.ECONNREFUSED: "ECONNREFUSED", syscall.ENETUNREACH: "ENETUNREACH", syscall.EHOSTUNREACH: "EHOSTUNREACH",
	syscall.ETIMEDOUT: "ETIMEDOUT", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ECONNRESET: "ECONNRESET",
}

func code(err error) string {
	var no syscall.Errno
	if errors.As(err, &no) {
		if n, ok := names[no]; ok {
			return n
		}
		return no.Error()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "ETIMEDOUT"
	}
	return err.Error()
}

func raw(request string) string {
	c, err := net.DialTimeout("tcp", "127.0.0.1:3128", 10*time.Second)
	if err != nil {
		return "error " + code(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		return "error " + code(err)
	}
	data, err := io.ReadAll(c)
	if err != nil && len(data) == 0 {
		return "error " + code(err)
	}
	return string(data)
}

var statusLine = regexp.MustCompile(\`^HTTP/1\\.[01] (\\d{3})\`)

func statusOf(text string) any {
	if m := statusLine.FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if len(text) > 80 {
		return text[:80]
	}
	return text
}

func direct(host string, port int) string {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 3*time.Second)
	if err != nil {
		return code(err)
	}
	c.Close()
	return "connected"
}

func main() {
	var p struct {
		HostPort int    \`json:"hostPort"\`
		Nonce    string \`json:"nonce"\`
	}
	if err := json.Unmarshal([]byte(os.Args[1]), &p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	got := raw(fmt.Sprintf("GET http://127.0.0.1:%d/egress-probe HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nConnection: close\\r\\n\\r\\n", p.HostPort, p.HostPort))
	body := ""
	if i := strings.Index(got, "\\r\\n\\r\\n"); i >= 0 {
		body = got[i+4:]
	}
	connect := raw("${CONNECT_REQ}")
	get := raw("${GET_REQ}")
	out := map[string]any{
		"allowed": map[string]any{"status": statusOf(got), "body_is_nonce": strings.Contains(body, p.Nonce)},
		"refused": map[string]any{"connect": statusOf(connect), "get": statusOf(get)},
		"direct": map[string]string{
			"192.0.2.1:80": direct("192.0.2.1", 80),
			fmt.Sprintf("172.17.0.1:%d", p.HostPort): direct("172.17.0.1", p.HostPort),
			fmt.Sprintf("127.0.0.1:%d", p.HostPort): direct("127.0.0.1", p.HostPort),
		},
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
`;

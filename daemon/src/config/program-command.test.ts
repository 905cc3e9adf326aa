import { describe, expect, it } from "vitest";
import { programCommand, rewriteProgram } from "./program-command.js";

// a filesystem of symlinks: the PATH entry of an `npm link`ed bin resolves to the repo's dist file
function fsOf(links: Record<string, string>) {
  return { realpath: (p: string) => links[p] ?? null, resolveModule: (s: string) => (s === "tsx" ? "/repo/node_modules/tsx/dist/esm/index.mjs" : null) };
}
const base = {
  bin: "mini-agent-client",
  file: "/repo/dist/client/src/cli.js",
  execArgv: [],
  execPath: "/opt/node/bin/node",
  pathEnv: "/usr/local/bin:/opt/node/bin",
};

describe("programCommand: a printed command runs as printed", () => {
  it("the bin's name when that name on the PATH is this very file (npm link)", () => {
    const fsx = fsOf({ "/repo/dist/client/src/cli.js": "/repo/dist/client/src/cli.js", "/usr/local/bin/mini-agent-client": "/repo/dist/client/src/cli.js" });
    expect(programCommand(base, fsx)).toBe("mini-agent-client");
  });

  it("regression: `node /abs/cli.js` when the bin is not on the PATH (the README's set-up), where it printed `mini-agent-client`", () => {
    const fsx = fsOf({ "/repo/dist/client/src/cli.js": "/repo/dist/client/src/cli.js", "/opt/node/bin/node": "/opt/node/bin/node" });
    expect(programCommand(base, fsx)).toBe("node /repo/dist/client/src/cli.js");
  });

  it("a bin on the PATH that is another copy is not this program", () => {
    const fsx = fsOf({
      "/repo/dist/client/src/cli.js": "/repo/dist/client/src/cli.js",
      "/usr/local/bin/mini-agent-client": "/old/dist/client/src/cli.js",
      "/opt/node/bin/node": "/opt/node/bin/node",
    });
    expect(programCommand(base, fsx)).toBe("node /repo/dist/client/src/cli.js");
  });

  it("keeps a loader flag, quotes a path with spaces, and names node by its path when PATH has another node", () => {
    const fsx = fsOf({ "/my repo/client/src/cli.ts": "/my repo/client/src/cli.ts", "/usr/local/bin/node": "/usr/local/bin/node" });
    const cmd = programCommand({ ...base, file: "/my repo/client/src/cli.ts", execArgv: ["--import", "tsx", "--inspect"] }, fsx);
    expect(cmd).toBe("/opt/node/bin/node --import /repo/node_modules/tsx/dist/esm/index.mjs '/my repo/client/src/cli.ts'");
  });
});

describe("rewriteProgram", () => {
  it("rewrites the bin's name where it starts a command, and nothing else", () => {
    const text = "run `mini-agent-client probe --family go`; see mini-agent-clientele";
    expect(rewriteProgram(text, "mini-agent-client", "node /r/cli.js")).toBe("run `node /r/cli.js probe --family go`; see mini-agent-clientele");
    expect(rewriteProgram(text, "mini-agent-client", "mini-agent-client")).toBe(text);
  });
});

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type BundleEntry, bundleEntry } from "../../scripts/bundle.js";

/**
 * The checks `npm run build` makes on every bundle (scripts/bundle.ts), on a tiny tree of
 * their own: a check that could never fail would let a heavy package back onto a bin's
 * start-up path, or a lazy path point at a file that is not there, unseen until a user
 * takes that path.
 */
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

/** a source tree (files by relative path) with a package `heavy` in its node_modules */
function tree(files: Record<string, string>): { root: string; dist: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bundle-"));
  roots.push(root);
  const all = {
    "node_modules/heavy/package.json": JSON.stringify({ name: "heavy", type: "module", main: "index.js" }),
    "node_modules/heavy/index.js": 'export const heavy = "heavy loaded";\n',
    ...files,
  };
  for (const [rel, text] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return { root, dist: path.join(root, "dist") };
}

const entry = (over: Partial<BundleEntry> = {}): BundleEntry => ({ source: "src/cli.ts", lazy: "inline", forbidden: [/node_modules\/heavy\//], ...over });

describe("npm run build's bundles", () => {
  it("refuses a bin whose start-up path imports a forbidden package, naming it", async () => {
    const t = tree({ "src/cli.ts": 'import { heavy } from "heavy";\nconsole.log(heavy);\n' });
    await expect(bundleEntry(entry(), t.dist, t.root)).rejects.toThrow(/start-up path imports node_modules\/heavy\/index\.js.*await import/);
  });

  it("accepts it behind an await import, and the lazy path still runs from the one file", async () => {
    const t = tree({
      "src/cli.ts": 'console.log("started");\nif (process.argv[2] === "heavy") console.log((await import("./heavy-path.js")).value);\n',
      "src/heavy-path.ts": 'import { heavy } from "heavy";\nexport const value = heavy;\n',
    });
    const b = await bundleEntry(entry(), t.dist, t.root);
    expect(b.startupModules).toBe(1);
    const run = (args: string[]) => spawnSync(process.execPath, [b.outfile, ...args], { encoding: "utf8" }).stdout;
    expect(run([])).toBe("started\n");
    expect(run(["heavy"])).toBe("started\nheavy loaded\n");
  });

  it("regression: a lazy import left beside the bundle points at the built module from the bundle's folder, where it pointed from the importing file's and was not found", async () => {
    const t = tree({
      "src/cli.ts": 'import { load } from "../lib/deep/load.js";\nconsole.log(await load());\n',
      "lib/deep/load.ts": 'export const load = async () => (await import("../../other/rare.js")).rare;\n',
      "other/rare.ts": 'export const rare = "rare path";\n',
    });
    const b = await bundleEntry(entry({ lazy: "beside" }), t.dist, t.root);
    // what tsc writes beside the bundle
    fs.mkdirSync(path.join(t.dist, "other"), { recursive: true });
    fs.writeFileSync(path.join(t.dist, "other/rare.js"), 'export const rare = "rare path";\n');
    const r = spawnSync(process.execPath, [b.outfile], { encoding: "utf8" });
    expect({ out: r.stdout, err: r.stderr }).toEqual({ out: "rare path\n", err: "" });
  });

  it("refuses a bundle that starts a worker thread from a file beside itself that is not there, and writes it there when listed", async () => {
    const files = {
      "src/cli.ts": 'import { start } from "../lib/threads.js";\nstart();\n',
      "lib/threads.ts":
        'import { Worker } from "node:worker_threads";\nexport const start = () => new Worker(new URL("./thread.js", import.meta.url)).on("message", (m) => console.log(m));\n',
      "lib/thread.ts": 'import { parentPort } from "node:worker_threads";\nparentPort?.postMessage("from the thread");\n',
    };
    const missing = tree(files);
    await expect(bundleEntry(entry(), missing.dist, missing.root)).rejects.toThrow(/opens thread\.js beside itself/);
    const listed = tree(files);
    const b = await bundleEntry(entry({ threads: ["lib/thread.ts"] }), listed.dist, listed.root);
    expect(spawnSync(process.execPath, [b.outfile], { encoding: "utf8" }).stdout).toBe("from the thread\n");
  });

  it("dockerode's BuildKit session and docker-modem's ssh transport load on their first call, not at start, and then behave as before", async () => {
    const t = tree({
      "node_modules/dockerode/package.json": JSON.stringify({ name: "dockerode", main: "lib/docker.js" }),
      "node_modules/dockerode/lib/docker.js":
        'var withSession = require("./session"), modem = require("docker-modem");\nmodule.exports = { session: (x) => withSession(x), ssh: (o) => modem(o) };\n',
      "node_modules/dockerode/lib/session.js": 'console.log("session loaded");\nmodule.exports = function (x) { return "session " + x + " " + this; };\n',
      "node_modules/docker-modem/package.json": JSON.stringify({ name: "docker-modem", main: "lib/modem.js" }),
      "node_modules/docker-modem/lib/modem.js": 'var ssh = require("./ssh");\nmodule.exports = (o) => ssh(o);\n',
      "node_modules/docker-modem/lib/ssh.js": 'console.log("ssh loaded");\nmodule.exports = function (opt) { return "ssh " + opt.host; };\n',
      "src/cli.ts":
        'import d from "dockerode";\nconsole.log("started");\nif (process.argv[2] === "use") { console.log(d.session("s1")); console.log(d.session("s2")); console.log(d.ssh({ host: "h" })); }\n',
    });
    const b = await bundleEntry(entry(), t.dist, t.root);
    const run = (args: string[]) => spawnSync(process.execPath, [b.outfile, ...args], { encoding: "utf8" }).stdout;
    // before: both modules ran their top level at start ("session loaded", "ssh loaded" before "started")
    expect(run([])).toBe("started\n");
    // loaded once, on the first call, with the same arguments, return value and `this` as a direct call
    expect(run(["use"])).toBe("started\nsession loaded\nsession s1 undefined\nsession s2 undefined\nssh loaded\nssh h\n");
  });
});

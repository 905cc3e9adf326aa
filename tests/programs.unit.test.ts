import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The walls between mini-agent's programs (docs/architecture.md): the import
 * rules of `npm run lint:imports` run over a small tree laid out like ours, so
 * each wall is seen refusing an arrow, and what the build ships is read from
 * tsconfig.json as tsc reads it.
 */
const REPO = path.resolve(import.meta.dirname, "..");
const rules = createRequire(import.meta.url)(path.join(REPO, ".dependency-cruiser.cjs")) as { forbidden: unknown[] };

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ma-walls-"));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes `from` importing `to` (extension-less, so no tsconfig is needed to resolve it) and returns the rules it breaks. */
async function brokenRules(from: string, to: string): Promise<string[]> {
  const root = fs.mkdtempSync(path.join(tmp, "tree-"));
  for (const f of [from, to]) fs.mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
  fs.writeFileSync(path.join(root, to), "export const x = 1;\n");
  fs.writeFileSync(
    path.join(root, from),
    `import { x } from "./${path.relative(path.dirname(path.join(root, from)), path.join(root, to)).replace(/\.ts$/, "")}";\nexport const y = x;\n`,
  );
  const { output } = await cruise([from.split("/")[0]!], { baseDir: root, validate: true, ruleSet: { forbidden: rules.forbidden } as never });
  return (output as ICruiseResult).summary.violations.map((v) => v.rule.name);
}

describe("import walls between the programs", () => {
  it("regression: the daemon importing the client is refused (the worker once lived in daemon/src and imported client and eval code)", async () => {
    expect(await brokenRules("daemon/src/runtime/a.ts", "client/src/api-client.ts")).toContain("daemon-never-imports-the-other-programs");
    expect(await brokenRules("daemon/src/a.ts", "eval/src/run-case.ts")).toContain("daemon-never-imports-the-other-programs");
    expect(await brokenRules("daemon/src/a.ts", "worker/src/worker.ts")).toContain("daemon-never-imports-the-other-programs");
    expect(await brokenRules("probes/a.ts", "experiments/src/cli.ts")).toContain("daemon-never-imports-the-other-programs");
  });

  it("the worker enters the daemon by main.ts and what clients share, never its logic", async () => {
    expect(await brokenRules("worker/src/a.ts", "daemon/src/main.ts")).toEqual([]);
    expect(await brokenRules("worker/src/a.ts", "daemon/src/contracts/fleet.ts")).toEqual([]);
    expect(await brokenRules("worker/src/a.ts", "eval/src/index.ts")).toEqual([]);
    expect(await brokenRules("worker/src/a.ts", "client-lib/index.ts")).toEqual([]);
    expect(await brokenRules("worker/src/a.ts", "daemon/src/runtime/service-impl.ts")).toEqual(["worker-is-a-daemon-plus-a-client"]);
    expect(await brokenRules("worker/src/a.ts", "client/src/render.ts")).toEqual(["worker-is-a-daemon-plus-a-client"]);
  });

  it("regression: the worker enters eval and the client library by their front doors only (it imported eval's fleet files and client/src/api-client.ts one by one)", async () => {
    expect(await brokenRules("worker/src/a.ts", "eval/src/fleet/queue-url.ts")).toEqual(["worker-is-a-daemon-plus-a-client"]);
    expect(await brokenRules("worker/src/a.ts", "eval/src/run-case.ts")).toEqual(["worker-is-a-daemon-plus-a-client"]);
    expect(await brokenRules("worker/src/a.ts", "client/src/api-client.ts")).toEqual(["worker-is-a-daemon-plus-a-client"]);
  });

  it("regression: client and eval share client-lib/, never each other's src (eval imported the client's API code, exit codes and quoting)", async () => {
    expect(await brokenRules("eval/src/a.ts", "client/src/render.ts")).toEqual(["eval-never-imports-the-client"]);
    expect(await brokenRules("eval/src/a.ts", "client-lib/index.ts")).toEqual([]);
    expect(await brokenRules("client/src/a.ts", "client-lib/index.ts")).toEqual([]);
    // the one documented arrow: the client's `eval`/`gate` commands load eval's entry
    expect(await brokenRules("client/src/main.ts", "eval/src/cli.ts")).toEqual([]);
    expect(await brokenRules("client/src/main.ts", "eval/src/run-case.ts")).toEqual(["client-and-eval-meet-only-at-the-eval-command"]);
    expect(await brokenRules("eval/src/a.ts", "client-lib/quote.ts")).toEqual(["client-lib-entered-by-its-front-door"]);
    expect(await brokenRules("client-lib/a.ts", "client/src/render.ts")).toEqual(["client-lib-owns-nothing"]);
    expect(await brokenRules("client-lib/a.ts", "daemon/src/runtime/service-impl.ts")).toEqual(["client-lib-owns-nothing"]);
    expect(await brokenRules("client-lib/a.ts", "daemon/src/contracts/run-view.ts")).toEqual([]);
    expect(await brokenRules("daemon/src/a.ts", "client-lib/index.ts")).toContain("daemon-never-imports-the-other-programs");
  });

  it("the offline report drives RunService but imports no other program; client and eval never import worker or experiments", async () => {
    expect(await brokenRules("experiments/src/a.ts", "daemon/src/runtime/service-impl.ts")).toEqual([]);
    expect(await brokenRules("experiments/src/a.ts", "client/src/quote.ts")).toEqual(["experiments-drive-the-run-service-never-a-client"]);
    expect(await brokenRules("client/src/a.ts", "worker/src/worker-args.ts")).toEqual(["client-and-eval-never-import-the-worker"]);
    expect(await brokenRules("eval/src/a.ts", "experiments/src/report.ts")).toEqual(["only-the-report-entry-imports-experiments"]);
    // a script other than the report's entry would pull experiments/ into the build through its imports
    expect(await brokenRules("scripts/bench-x.ts", "experiments/src/report.ts")).toEqual(["only-the-report-entry-imports-experiments"]);
    expect(await brokenRules("scripts/experiments.ts", "experiments/src/cli.ts")).toEqual([]);
  });
});

describe("what the build ships", () => {
  const built = () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(path.join(REPO, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    if (!parsed || parsed.errors.length > 0) throw new Error("tsconfig.json does not parse");
    return parsed.fileNames.map((f) => path.relative(REPO, f));
  };

  it("every bin in package.json is compiled from a source the build includes", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { bin: Record<string, string> };
    const files = built();
    for (const [name, bin] of Object.entries(pkg.bin)) {
      expect(bin, name).toMatch(/^dist\/.+\.js$/);
      expect(files, `${name}: ${bin}`).toContain(bin.replace(/^dist\//, "").replace(/\.js$/, ".ts"));
    }
  });

  // with only-the-report-entry-imports-experiments above, no import can pull it back in
  it("regression: the offline report does not ship in dist/ (experiments/ was compiled into it through scripts/experiments.ts)", () => {
    expect(built().filter((f) => f.startsWith("experiments/") || f === "scripts/experiments.ts")).toEqual([]);
  });
});

/**
 * mini-agent's import rules, checked in CI (`npm run lint:imports`).
 * Why each rule exists is in its comment; a violation names the two files.
 */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "A cycle means two modules are one concept split in two, or a type that needs its own home.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "contracts-import-nothing-of-ours",
      comment: "contracts/ is the one source of truth for schemas; it may use zod and itself, nothing else of the daemon.",
      severity: "error",
      from: { path: "^daemon/src/contracts/" },
      to: { path: "^(daemon|client|probes|sandbox-image)/", pathNot: "^daemon/src/(contracts/|errors\\.ts$)" },
    },
    {
      name: "sandbox-never-imports-runtime",
      comment: "The sandbox executes; it never drives a run. runtime/ uses sandbox/, never the other way round.",
      severity: "error",
      from: { path: "^daemon/src/sandbox/" },
      to: { path: "^daemon/src/runtime/" },
    },
    {
      name: "client-owns-nothing",
      comment:
        "The client shares only the daemon's contracts, the error codes they name, the one rule for where the state dir (and so the socket) lives, and the programs' shared command-line helpers (config/cli-args.ts: usage errors; config/program-command.ts: how a printed command names a program); it never reaches into the daemon's logic. One pure exception: `mcp --http` reads its bearer token with the daemon's own token-file rule (credentials/token-file.ts: no symlink, 0600, long enough), so the two listeners can never disagree on what a safe token file is.",
      severity: "error",
      from: { path: "^client/src/", pathNot: "\\.test\\.ts$" },
      to: { path: "^daemon/", pathNot: "^daemon/src/(contracts/|errors\\.ts$|config/(state-dir|cli-args|program-command)\\.ts$|credentials/token-file\\.ts$)" },
    },
    {
      name: "eval-talks-to-the-daemon-through-its-api",
      comment:
        "eval/ (eval run, capture, metrics, gate) is a client of the daemon: its contracts, error codes, the state-dir rule and the client's API code, never the daemon's logic. Three pure exceptions: the case loader checks a replay's apply_patch versions with the host's own patch rule (tools/patch-text.ts) and file-version hash (workspace/hash.ts), so a case is never judged by a second copy that could disagree; and it measures a case's repo/ with the daemon's own copy limits (workspace/copy-limits.ts), so a case the daemon would refuse is refused before the suite starts.",
      severity: "error",
      from: { path: "^eval/src/", pathNot: "\\.test\\.ts$" },
      to: {
        path: "^daemon/",
        pathNot:
          "^daemon/src/(contracts/|errors\\.ts$|config/(state-dir|cli-args|program-command)\\.ts$|tools/patch-text\\.ts$|workspace/hash\\.ts$|workspace/copy-limits\\.ts$)",
      },
    },
    {
      name: "no-test-kits-in-production",
      comment: "Test kits and tests are never imported by shipped code (they must stay out of dist/ and the image).",
      severity: "error",
      from: { path: "^(daemon|client|eval|probes|sandbox-image)/", pathNot: "(\\.test\\.ts|\\.testkit\\.ts)$" },
      to: { path: "(\\.test\\.ts|\\.testkit\\.ts)$|^tests/" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.tests.json" },
    // the MCP SDK is reached only through its package.json `exports` subpaths (`./*` to dist/esm/*), as Node resolves them
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "types", "default"] },
  },
};

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
      to: { path: "^(daemon|client|client-lib|eval|worker|experiments|probes|sandbox-image)/", pathNot: "^daemon/src/(contracts/|errors\\.ts$)" },
    },
    {
      name: "daemon-never-imports-the-other-programs",
      comment:
        "The daemon is the one trusted process; client, eval, worker and experiments are programs built on it, never parts of it. An arrow back would put a client's code (and its bugs) inside the trusted process and ship it in every daemon. probes/ and sandbox-image/ are daemon-side libraries (the daemon imports them), so they hold the same line.",
      severity: "error",
      from: { path: "^(daemon|probes|sandbox-image)/" },
      to: { path: "^(client|client-lib|eval|worker|experiments)/" },
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
      name: "client-lib-owns-nothing",
      comment:
        "client-lib/ is what more than one program that talks to the daemon shares (API client, exit codes, target resolution, terminal quoting, the verdict's words). It sits under client, eval and worker, so it imports none of them, and from the daemon only what every client may: contracts, error codes and the state-dir rule.",
      severity: "error",
      from: { path: "^client-lib/" },
      to: {
        path: "^(daemon|client|eval|worker|experiments|probes|sandbox-image)/",
        pathNot: "^daemon/src/(contracts/|errors\\.ts$|config/state-dir\\.ts$)",
      },
    },
    {
      name: "client-lib-entered-by-its-front-door",
      comment: "Every program takes the shared client library through client-lib/index.ts, so what it offers is one list and its modules can move behind it.",
      severity: "error",
      from: { pathNot: "^client-lib/" },
      to: { path: "^client-lib/", pathNot: "^client-lib/index\\.ts$" },
    },
    {
      name: "client-and-eval-meet-only-at-the-eval-command",
      comment:
        "client and eval share code through client-lib/, never each other's src. One arrow stays, documented in docs/architecture.md: the client's `eval`/`gate` subcommands load eval/src/cli.ts lazily (client/src/main.ts), so `mini-agent-client eval ...` is one program for the user while `status` and `approve` start without any of eval. eval never imports the client.",
      severity: "error",
      from: { path: "^client/" },
      to: { path: "^eval/", pathNot: "^eval/src/cli\\.ts$" },
    },
    {
      name: "eval-never-imports-the-client",
      comment:
        "What eval once took from client/src (API client, exit codes, quoting, target, the verdict's lines) lives in client-lib/; an arrow back would make client and eval a cycle of programs again.",
      severity: "error",
      from: { path: "^eval/" },
      to: { path: "^client/" },
    },
    {
      name: "eval-talks-to-the-daemon-through-its-api",
      comment:
        "eval/ (eval run, capture, metrics, gate) is a client of the daemon: its contracts, error codes, the state-dir rule and the client's API code, never the daemon's logic. Three pure exceptions: the case loader checks a replay's apply_patch versions with the host's own patch rule (tools/patch-text.ts) and file-version hash (workspace/hash.ts), so a case is never judged by a second copy that could disagree; and it measures a case's repo/ with the daemon's own copy limits (workspace/copy-limits.ts), so a case the daemon would refuse is refused before the suite starts. And `eval import --swebench` (eval/src/swebench/) drafts a case's verify preset with the daemon's own detection (adhoc/detect.ts, repo-files.ts, defaults.ts: they only read files), so an imported case runs the command an ad-hoc run on that repository would, and reads a repository's objects through the daemon's confined file system (adhoc/confined-fs.ts), the one reviewed way to read a repository as data.",
      severity: "error",
      from: { path: "^eval/src/", pathNot: "\\.test\\.ts$" },
      to: {
        path: "^daemon/",
        pathNot:
          "^daemon/src/(contracts/|errors\\.ts$|config/(state-dir|cli-args|program-command)\\.ts$|tools/patch-text\\.ts$|workspace/hash\\.ts$|workspace/copy-limits\\.ts$|adhoc/(detect|repo-files|defaults|confined-fs)\\.ts$)",
      },
    },
    {
      name: "worker-is-a-daemon-plus-a-client",
      comment:
        "mini-agent-worker (worker/) is a daemon of its own plus a queue consumer. From the daemon it takes the program's front door, main.ts and wiring.ts, so its daemon is the same RunService, policy, Verifier, live gate and reaper as mini-agent-daemon's; beside that only what every client shares: contracts, error codes, the command-line helpers (config/cli-args, program-command, shutdown-signals, state-dir, version) and the one canonical-JSON hash (workspace/hash.ts), so the isolation report hash a worker names is the one the daemon computes. From eval it takes the producer's other half through eval's front door (eval/src/index.ts: the fleet's queue code and the case runner), never a copy, so a case runs on a worker exactly as `eval run` runs it; the API client through client-lib's front door. Nothing of client/, probes/, sandbox-image/ or experiments/.",
      severity: "error",
      from: { path: "^worker/" },
      to: {
        path: "^(daemon|client|client-lib|eval|experiments|probes|sandbox-image)/",
        pathNot:
          "^daemon/src/(main\\.ts$|wiring\\.ts$|contracts/|errors\\.ts$|config/(state-dir|cli-args|program-command|shutdown-signals|version)\\.ts$|workspace/hash\\.ts$)|^eval/src/index\\.ts$|^client-lib/index\\.ts$",
      },
    },
    {
      name: "experiments-drive-the-run-service-never-a-client",
      comment:
        "The offline report (experiments/) is a white-box harness: its evidence is about the daemon's own code, so it drives RunService (runtime/) with the executors the daemon wires (sandbox/) and reads what they wrote, without the HTTP layer between; that is why it may enter more of the daemon than a client may. It stays within config/, contracts/, context/, orchestrators/, runtime/, sandbox/, workspace/, errors.ts and the probe and image entry points (probes/run.ts, sandbox-image/pin-image.ts), and never imports client/, client-lib/, eval/ or worker/: its figures must not depend on another program's code.",
      severity: "error",
      from: { path: "^experiments/" },
      to: {
        path: "^(daemon|client|client-lib|eval|worker|probes|sandbox-image)/",
        pathNot:
          "^daemon/src/((config|contracts|context|orchestrators|runtime|sandbox|workspace)/|errors\\.ts$)|^probes/run\\.ts$|^sandbox-image/pin-image\\.ts$",
      },
    },
    {
      name: "client-and-eval-never-import-the-worker",
      comment:
        "The worker sits on top of client and eval code, not under it: an arrow back would make the programs a cycle and drag BullMQ's consumer side into the client.",
      severity: "error",
      from: { path: "^(client|client-lib|eval)/" },
      to: { path: "^worker/" },
    },
    {
      name: "only-the-report-entry-imports-experiments",
      comment:
        "The offline report is research code run from source: scripts/experiments.ts is its one entry and is left out of the build (tsconfig.json), so as long as nothing else but tests imports experiments/, none of it ships in dist/ or the image.",
      severity: "error",
      from: { pathNot: "^(experiments/|tests/|scripts/experiments\\.ts$)" },
      to: { path: "^experiments/" },
    },
    {
      name: "no-test-kits-in-production",
      comment: "Test kits and tests are never imported by shipped code (they must stay out of dist/ and the image).",
      severity: "error",
      from: { path: "^(daemon|client|client-lib|eval|worker|probes|sandbox-image)/", pathNot: "(\\.test\\.ts|\\.testkit\\.ts)$" },
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

import type { PolicyFile } from "../contracts/policy.js";

/**
 * The policy a daemon has when no policy file exists. Reads and named test
 * presets run; writes and unlisted commands ask a person (`interactive`).
 * Unattended profiles (`ci`, `eval`) can have no person to ask: there an
 * unlisted command is denied, and writes still ask, so a `ci` run stops at a
 * pending write unless the policy file gives it `auto_edit` globs; `eval` approves
 * writes inside the task's own writable globs (`auto_edit_writable`).
 */
export const BUILTIN_POLICY: PolicyFile = {
  schema_version: 1,
  default_profile: "interactive",
  tools: { read: "allow", write: "ask", command: "ask", test: "allow" },
  auto_edit: [],
  commands: {
    // checks that read the tree and print findings; nothing here fetches, installs or writes. Each entry is
    // the WHOLE argv it allows (contracts/policy.ts ArgvShape): `<path>` is a workspace path (relative, no
    // `..`, never an option), `<pkg>` a Go package pattern in the module (`./...`). A prefix let options
    // in that run code of the workspace's choosing (`node --check --import data:...`, `go vet -toolexec=`,
    // `gofmt -l -w` writing): any other option or shape is unlisted (ask; denied under ci and eval).
    // What our images have (sandbox-image/definitions.ts): node: `node` (and `env`); python: `python3`/`python`
    // 3.11 with the stdlib and pytest; go: `go` and `gofmt`. ruff is for projects whose own image has it: a
    // run keeps only the entries its image's PATH has (policy/image-programs.ts, read from the pinned image).
    // Not listed, because they run the project's own code by definition: `npm run lint` (a package.json
    // script), `npx tsc`/`npx eslint` (the workspace's node_modules/.bin), `python -m mypy` (plugins named in
    // its config). A policy file may list them, knowing that.
    allow: [
      ["node", "--check", "<path>"],
      // `-P` (Python >= 3.11; the python image has 3.11.2): the workspace is not on sys.path, so a repo's
      // own py_compile.py cannot shadow the stdlib's. The entry requires it rather than the daemon adding
      // it: the argv that runs is the argv decided, traced and (for an ask) approved. `-I` would also
      // ignore the image's PYTHONPYCACHEPREFIX and write __pycache__ into the workspace.
      ["python3", "-P", "-m", "py_compile", "<path>..."],
      ["python", "-P", "-m", "py_compile", "<path>..."],
      ["go", "vet"],
      ["go", "vet", "<pkg>..."],
      ["gofmt", "-l", "<path>..."],
      ["ruff", "check", "<path>..."],
    ],
    // matched after normalising (command-words.ts): `rm -fr /`, `npm isntall`, `python3 -mpip install`
    // and `chmod 0777` hit these. A convenience above a sandbox without network, not the boundary.
    deny_tokens: [
      "curl",
      "wget",
      "ssh",
      "scp",
      "sftp",
      "rsync",
      "nc",
      "ncat",
      "netcat",
      "telnet",
      "sudo",
      "su",
      "doas",
      "docker",
      "podman",
      "kubectl",
      "git push",
      "git remote",
      "git config",
      "git send-pack",
      "git http-push",
      "rm -rf /",
      "chmod 777",
      "pip install",
      "pip3 install",
      // npm's own aliases and typos name the same commands (`npm i`, `add`, `isntall`: policy/npm-commands.ts)
      "npm install",
      "npm ci",
      "npm install-test",
      "npm install-ci-test",
      "npm update",
      "npm publish",
      "yarn add",
      "pnpm add",
      "go get",
      "go install",
      // `go run x@latest` fetches and runs a module
      "go run *@*",
      "go mod download",
    ],
  },
  profiles: {
    interactive: {},
    // nobody is there to answer: the allowlisted checks run, anything else is denied
    ci: { commands: { unlisted: "deny" } },
    // each case's task names its writable paths; nobody is there to approve a write inside them
    eval: { commands: { unlisted: "deny" }, auto_edit_writable: true },
  },
};

/**
 * Programs that would run a shell string: always denied as a program, in
 * every policy, so `run_command` stays argv-only (`sh -c`, `env X=1 bash`).
 */
export const SHELLS: readonly string[] = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "busybox"];

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
    // checks that read the tree and print findings; nothing here fetches or installs. A prefix
    // admits any words after it (`node --check --require x.js` loads x.js): that is bounded by the
    // sandbox (no network, changes discarded), and a policy file can drop an entry.
    // What our images have (sandbox-image/definitions.ts): node: only `node`; python: `python3`/`python`
    // with the stdlib and pytest (py_compile yes; mypy, pyflakes, ruff no); go: `go` and `gofmt`.
    // None has npm, npx, make or a shell: the npm/npx/ruff/mypy entries are the examples, for
    // projects whose own image provides them.
    allow: [
      ["npm", "run", "lint"],
      ["npm", "run", "typecheck"],
      ["npx", "tsc", "--noEmit"],
      ["npx", "eslint"],
      ["npx", "biome", "check"],
      ["ruff", "check"],
      ["python", "-m", "mypy"],
      ["python3", "-m", "mypy"],
      // in our images
      ["node", "--check"],
      ["python3", "-m", "py_compile"],
      ["python", "-m", "py_compile"],
      ["go", "vet"],
      ["gofmt", "-l"],
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

/**
 * `npm run experiments -- --group all|1|2|3|4|5 --output DIR [--replace] [--runtime runc|runsc] [--image-lock FILE]`
 * The deterministic offline report: see experiments/src/cli.ts.
 */
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../experiments/src/cli.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

main(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  repoRoot,
  nodeVersion: process.version,
  nodeExecPath: process.execPath,
  platform: process.platform,
  cpus: os.cpus().length,
  stdout: (l) => process.stdout.write(`${l}\n`),
  stderr: (l) => process.stderr.write(`${l}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`experiments failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);

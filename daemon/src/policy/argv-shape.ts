import { SHAPE_ANY_REST } from "../contracts/policy.js";
import { isWorkspaceRoot, normalizeRel } from "../workspace/safe-path.js";

/**
 * Whether an argv is exactly the shape an allow entry describes
 * (contracts/policy.ts ArgvShape): every literal word in its place, each
 * placeholder filled by an operand it admits, nothing more. A prefix let any
 * option through (`node --check --import data:...`, `go vet -toolexec=...`,
 * `gofmt -l -w`): a shape admits only what it names, and every other argv is
 * unlisted, so it asks or is denied, never silently allowed.
 */
export function matchesShape(argv: readonly string[], shape: readonly string[]): boolean {
  for (let i = 0; i < shape.length; i++) {
    const w = shape[i] as string;
    if (w === SHAPE_ANY_REST) return true;
    if (w.endsWith("...")) {
      const rest = argv.slice(i);
      return rest.length > 0 && rest.every((a) => operandFits(w.slice(0, -3), a));
    }
    const a = argv[i];
    if (a === undefined) return false;
    if (w === "<path>" || w === "<pkg>" ? !operandFits(w, a) : a !== w) return false;
  }
  return argv.length === shape.length;
}

function operandFits(placeholder: string, a: string): boolean {
  // never an option: `-w`, `--`, `-` (stdin) are not operands
  if (a.startsWith("-")) return false;
  if (placeholder === "<path>") return isWorkspaceRoot(a) || normalizeRel(a).ok;
  if (placeholder === "<pkg>") return isLocalGoPackage(a);
  return false;
}

/**
 * `.`, `./...`, `./dir` or `./dir/...`: a package pattern inside the module.
 * An import path (`example.com/x`, `x@latest`) is refused: it names code from
 * elsewhere, not the workspace.
 */
function isLocalGoPackage(a: string): boolean {
  if (a === "." || a === "./...") return true;
  if (!a.startsWith("./")) return false;
  const dir = a.endsWith("/...") ? a.slice(0, -4) : a;
  return normalizeRel(dir).ok;
}

import { describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { quoteArgv } from "../../client-lib/index.js";
import { pendingActionText } from "./render.js";
import { whyLine } from "./why.js";

describe("a proposed command on a terminal", () => {
  it("quotes each word only when needed, so the line can be pasted into a shell", () => {
    expect(quoteArgv(["node", "--check", "src/a.js"])).toBe("node --check src/a.js");
    expect(quoteArgv(["node", "-e", "console.log('hi there')"])).toBe(`node -e 'console.log('\\''hi there'\\'')'`);
    expect(quoteArgv(["echo", "$HOME", "a;b", "*"])).toBe("echo '$HOME' 'a;b' '*'");
  });

  it("regression: a word with terminal escapes or bidi marks cannot move the cursor, clear the screen or hide text", () => {
    const line = quoteArgv(["node", "x\u001b[2J\u001b[H\rok", "a\u202eb", "l\nm"]);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(line).toBe(`node $'x\\x1b[2J\\x1b[H\\x0dok' $'a\\u202eb' $'l\\x0am'`);
  });

  it("shows a pending command as its argv with the rule that asked, and no diff", () => {
    const run = {
      run_id: "run_1",
      status: "awaiting_approval",
      pending_action: {
        action_id: "act_1",
        call_id: "c1",
        tool: "run_command",
        path: "",
        diff: "",
        why: null,
        command: { argv: ["node", "-e", "x\u001b]0;pwned\u0007"], rule: "policy:interactive:tools.command" },
      },
    } as unknown as RunView;
    const text = pendingActionText(run);
    expect(text).toContain(`command: node -e $'x\\x1b]0;pwned\\x07'`);
    expect(text).toContain("asked by rule: policy:interactive:tools.command");
    expect(text).toMatch(/files it changes there are discarded/);
    expect(text).not.toContain("\u001b");
    // the model's reason too, also when the text does not go to a terminal (it was printed raw through a pipe)
    const why = pendingActionText({ ...run, pending_action: { ...run.pending_action!, why: "ok\u001b]0;t\u0007\u202e" } } as RunView);
    expect(why).toContain("why:     ok\\x1b]0;t\\x07\\u202e");
    expect(whyLine(run)).toBe(`awaiting approval: run_command node -e $'x\\x1b]0;pwned\\x07' (action act_1, asked by policy:interactive:tools.command)`);
  });
});

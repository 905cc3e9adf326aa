import { MiniAgentError } from "../../daemon/src/errors.js";
import type { EvalCommand } from "./command.js";

export const captureCommand: EvalCommand = {
  async main() {
    throw new MiniAgentError("internal", "not built yet");
  },
};

import { z } from "zod";
import { SchemaVersion } from "./common.js";
import { ToolCall } from "./tool-call.js";

/** What a decision source (replay or live model) may do in one turn. */
export const Decision = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("plan"), text: z.string().min(1).max(8192) }),
  z.strictObject({ kind: z.literal("tool"), call: ToolCall }),
  z.strictObject({ kind: z.literal("final"), text: z.string().max(8192) }),
]);
export type Decision = z.infer<typeof Decision>;

export const ReplayFile = z.strictObject({
  schema_version: SchemaVersion,
  decisions: z.array(Decision).min(1).max(1000),
});
export type ReplayFile = z.infer<typeof ReplayFile>;

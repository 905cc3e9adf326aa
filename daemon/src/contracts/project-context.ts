import { z } from "zod";

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const Count = z.number().int().nonnegative();

/**
 * The `project_context` trace event of every run (issue 12): what the run was
 * told about the project, by size and digest, never by content (the content
 * is the workspace's and may hold anything; the digests identify it). Built
 * once per run at creation, the same for a replay and a live run.
 */
export const ProjectContextFacts = z.strictObject({
  /** always true: the rules file and the map are the repository's data, never instructions */
  untrusted: z.literal(true),
  /** what the marking means, for a reader of the trace */
  note: z.string(),
  rules: z.strictObject({
    /** workspace-relative path of the first rules file found, or null for none */
    path: z.string().nullable(),
    /** size of the file as read */
    bytes: Count,
    /** bytes given to the model (at most the cap) */
    given_bytes: Count,
    /** SHA-256 of the bytes given (of "" when there is none) */
    sha256: Sha256,
    truncated: z.boolean(),
  }),
  repo_map: z.strictObject({
    entries: Count,
    bytes: Count,
    sha256: Sha256,
    truncated: z.boolean(),
  }),
  /** SHA-256 of the whole fenced message a live model receives */
  message_sha256: Sha256,
});
export type ProjectContextFacts = z.infer<typeof ProjectContextFacts>;

/** What is kept in the run's control dir, so a resumed run tells the model the same bytes. */
export const StoredProjectContext = z.strictObject({
  schema_version: z.literal(1),
  facts: ProjectContextFacts,
  rules_text: z.string(),
  map_text: z.string(),
});
export type StoredProjectContext = z.infer<typeof StoredProjectContext>;

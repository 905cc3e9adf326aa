import { z } from "zod";

/** A file version: SHA-256 hex of its bytes, or the literal `absent` for a file that does not exist yet. */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters (SHA-256)");
export const FileVersion = z.union([Sha256Hex, z.literal("absent")]);

/** Relative workspace path as the model writes it; safety is checked by workspace/safe-path, not here. */
export const RelPath = z.string().min(1).max(512);

export const Id = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, "ids are 1-128 characters of [A-Za-z0-9_.:-]");

/** Every persisted record carries this; unknown versions are refused, not reinterpreted. */
export const SCHEMA_VERSION = 1 as const;
export const SchemaVersion = z.literal(SCHEMA_VERSION);

/** Renders a zod failure as a short, path-bearing message fit for a user or a model (no stack). */
export function describeZodError(error: z.core.$ZodError): string {
  return z.prettifyError(error);
}

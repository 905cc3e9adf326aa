import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { describeZodError } from "../contracts/common.js";
import { apiError } from "./http-errors.js";

/**
 * Reads a request body up to `maxBytes`. Beyond that the request is refused
 * with payload_too_large (413) before anything is parsed or changed.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) {
    // Read and drop a moderately oversized body before answering, so a client still
    // sending it reads the 413 instead of a reset; a huge one is cut off (connection closed).
    if (Number(declared) <= DRAIN_FACTOR * maxBytes) await drain(req);
    else req.resume();
    throw apiError("payload_too_large", `request body is ${declared} bytes; the limit is ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > maxBytes) {
      req.resume();
      throw apiError("payload_too_large", `request body exceeds the limit of ${maxBytes} bytes`);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

const DRAIN_FACTOR = 16;

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _chunk of req) {
    /* discard */
  }
}

/** JSON body validated by a strict zod schema; an empty body counts as `{}`. */
export function parseJsonBody<S extends z.ZodType>(raw: Buffer, schema: S, what: string): z.infer<S> {
  let json: unknown = {};
  if (raw.length > 0) {
    const text = raw.toString("utf8");
    try {
      json = JSON.parse(text);
    } catch {
      throw apiError("invalid_request", `${what}: body is not valid JSON`);
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw apiError("invalid_request", `${what}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export function parseParam<S extends z.ZodType>(value: string, schema: S, name: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw apiError("invalid_request", `${name}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export function parseQuery<S extends z.ZodType>(params: URLSearchParams, schema: S): z.infer<S> {
  const obj: Record<string, string> = {};
  for (const [k, v] of params) {
    if (k in obj) throw apiError("invalid_request", `query parameter ${k} given twice`);
    obj[k] = v;
  }
  const parsed = schema.safeParse(obj);
  if (!parsed.success) throw apiError("invalid_request", `query: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

import { KNOWN_SECRET_MIN_CHARS } from "./rules.js";

/**
 * The exact credential values this daemon holds, as they become known (the TCP
 * token at start-up, the model's API key on its first read). Created once in
 * main() and handed to each sink; never a module-level singleton.
 */
export interface SecretSet {
  add(value: string | null | undefined): void;
  values(): readonly string[];
}

export function createSecretSet(): SecretSet {
  const held = new Set<string>();
  return {
    add(value) {
      if (typeof value === "string" && value.length >= KNOWN_SECRET_MIN_CHARS) held.add(value);
    },
    values: () => [...held],
  };
}

import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMAGE_DEFINITIONS, type ImageDefinition } from "./definitions.js";
import { imageInputsKey } from "./inputs-key.js";

let dir: string;
let def: ImageDefinition;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-inputs-key-"));
  await fs.mkdir(path.join(dir, "tree/sub"), { recursive: true });
  await fs.writeFile(path.join(dir, "tree/a.txt"), "a");
  await fs.writeFile(path.join(dir, "tree/sub/b.txt"), "b");
  await fs.mkdir(path.join(dir, "tree/left-out"));
  await fs.writeFile(path.join(dir, "tree/left-out/c.txt"), "c");
  def = { ...IMAGE_DEFINITIONS.node, trees: [[path.join(dir, "tree"), "/opt/tree"]], exclude: [path.join(dir, "tree/left-out")] };
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe("an image's inputs key", () => {
  it("is the same for the same inputs, so a second build can reuse the first one's image", async () => {
    expect(await imageInputsKey(def)).toBe(await imageInputsKey({ ...def }));
  });

  it("changes when a copied host file changes, is added, or the definition changes; an excluded file does not count", async () => {
    const before = await imageInputsKey(def);
    await fs.writeFile(path.join(dir, "tree/left-out/c.txt"), "changed, but never copied");
    expect(await imageInputsKey(def)).toBe(before);

    await fs.writeFile(path.join(dir, "tree/sub/b.txt"), "b, longer now");
    const edited = await imageInputsKey(def);
    expect(edited).not.toBe(before);

    await fs.writeFile(path.join(dir, "tree/sub/new.txt"), "n");
    const added = await imageInputsKey(def);
    expect(added).not.toBe(edited);

    expect(await imageInputsKey({ ...def, env: { ...def.env, EXTRA: "1" } })).not.toBe(added);
  });

  it("differs between families", async () => {
    expect(await imageInputsKey(IMAGE_DEFINITIONS.node)).not.toBe(await imageInputsKey(IMAGE_DEFINITIONS["node-base"]));
  });
});

#!/usr/bin/env node
import process from "node:process";
import { checkLinks, listDocuments } from "../src/linkcheck.js";

// usage: linkcheck ROOT_DIR [DOC.md ...]   (no documents named: every .md under ROOT_DIR)
const [rootDir, ...docs] = process.argv.slice(2);
if (!rootDir) {
  console.error("usage: linkcheck ROOT_DIR [DOC.md ...]");
  process.exit(2);
}
let broken = 0;
for (const doc of docs.length > 0 ? docs : listDocuments(rootDir)) {
  for (const link of checkLinks(rootDir, doc)) {
    console.log(`${link.doc}:${link.line}: broken link ${link.target}`);
    broken++;
  }
}
process.exit(broken === 0 ? 0 : 1);

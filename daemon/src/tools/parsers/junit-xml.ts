/**
 * JUnit XML reports (pytest --junitxml, vitest/jest junit reporters, ...).
 * Their structure is parsed by fast-xml-parser, never by regular expressions
 * (one regex only checks that a count attribute is digits).
 *
 * Counts come from the `<testcase>` elements, one per test with its own
 * outcome. The suites' `tests`/`failures`/`errors`/`skipped` attributes are
 * single numbers the writer sets freely (`<testsuites tests="100">` costs
 * nothing to forge) and say nothing about which test did what; both are written
 * by the test process, so neither is proof, but a report whose attributes
 * disagree with its own test cases is refused rather than believed either way.
 * (That is also why jest-junit reports with `it.todo` are refused: it lists a
 * todo as a plain, apparently passing, test case and leaves it out of `tests`.)
 */
import { XMLParser, XMLValidator, type X2jOptions } from "fast-xml-parser";
import { CaseList } from "./cases.js";
import { reportFileRefusal, type ReportFile } from "./report-file.js";
import { accepted, cap, refused, resolveParseOptions, type ReportParseOptions, type TestFailure, type TestReportSummary } from "./summary.js";
import { contentAfterRoot, decodeXmlText, rawTextForDisplay, scanMarkup } from "./xml-markup.js";

/**
 * Depth a JUnit report needs: testsuites > testsuite (a few levels when nested)
 * > testcase > failure. Deeper is refused before the tree is built.
 */
const MAX_DEPTH = 32;

/**
 * The parser's work grows with tokens, not bytes: 2 MiB of `<x/>` is 500,000
 * elements and seconds of synchronous CPU in the daemon. A real report has one
 * to five elements per test case; these bounds leave room for ~20,000 cases.
 */
const MAX_ELEMENTS = 100_000;
const MAX_ATTRIBUTES = 200_000;
/** the validator reads attribute values slowly (~1 s per MiB); a failure message needs far less */
const MAX_ATTRIBUTE_CHARS = 262_144;

const PARSER_OPTIONS = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  // never expand entities: no DTD, no bombs; display text is decoded by decodeXmlText
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  // a count attribute " 2" is not a count; messages are trimmed where they are shown
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: MAX_DEPTH,
  // no callbacks read paths; building them for every tag doubles the parse time
  jPath: false,
  // bodies that hold no test structure are kept as raw text: building a large captured
  // output character by character costs seconds (a 2 MiB system-out: ~2 s -> ~0.1 s)
  stopNodes: ["*.failure", "*.error", "*.skipped", "*.system-out", "*.system-err", "*.properties"],
} satisfies X2jOptions;

const COUNT_ATTRIBUTES = ["tests", "failures", "errors", "skipped"] as const;
type CountAttribute = (typeof COUNT_ATTRIBUTES)[number];
type Tally = Record<CountAttribute, number>;

interface Suite {
  label: string;
  /** the suite's own name attribute (vitest: the test file) */
  name: string;
  claimed: Partial<Tally>;
  found: Tally;
  /**
   * cases whose only trouble is `<error message="failed on teardown ...">`: pytest 7
   * counts such a test twice in `tests` (its pass and its teardown error) but writes
   * one case, so its `tests` may exceed the cases by this many
   */
  teardownOnly: number;
}

type XmlNode = Record<string, unknown>;

class Refusal extends Error {
  constructor(
    readonly kind: "unparsable" | "inconsistent",
    readonly problem: string,
  ) {
    super(problem);
  }
}

function tagOf(node: XmlNode): string | null {
  const keys = Object.keys(node).filter((k) => k !== ":@");
  return keys.length === 1 && keys[0] !== "#text" ? (keys[0] as string) : null;
}

function childrenOf(node: XmlNode, tag: string): XmlNode[] {
  const c = node[tag];
  return Array.isArray(c) ? (c as XmlNode[]) : [];
}

function attrsOf(node: XmlNode): Record<string, string> {
  const a = node[":@"];
  return a !== null && typeof a === "object" ? (a as Record<string, string>) : {};
}

function attr(node: XmlNode, name: string): string | undefined {
  const a = attrsOf(node);
  return Object.hasOwn(a, name) && typeof a[name] === "string" ? a[name] : undefined;
}

function textOf(node: XmlNode, tag: string): string {
  return childrenOf(node, tag)
    .map((c) => (typeof c["#text"] === "string" ? c["#text"] : ""))
    .join("\n");
}

function describeSuite(tag: string, node: XmlNode): string {
  const name = attr(node, "name");
  return name === undefined ? `<${tag}>` : `<${tag} name="${decodeXmlText(name).slice(0, 80)}">`;
}

function claimedCounts(tag: string, node: XmlNode): Partial<Tally> {
  const claimed: Partial<Tally> = {};
  for (const key of COUNT_ATTRIBUTES) {
    const raw = attr(node, key);
    if (raw === undefined) continue;
    // digits only: "-1", "NaN", "1e3", " 3" and "3.0" are not counts
    if (!/^[0-9]{1,9}$/.test(raw)) throw new Refusal("unparsable", `${describeSuite(tag, node)} has ${key}="${raw.slice(0, 20)}", which is not a count`);
    claimed[key] = Number(raw);
  }
  return claimed;
}

interface Walk {
  suites: Suite[];
  /** counts of the test cases that are tests (load errors are not) */
  tally: Tally;
  cases: CaseList;
  /** test cases with a failure, an error or both: each is one failed test */
  failedCases: number;
  failures: TestFailure[];
}

/** `tests/test_x.py` -> `tests.test_x`: the module path pytest puts at the head of a classname */
function modulePathOf(file: string): string {
  return file.replace(/\.py$/, "").replace(/[\\/]/g, ".");
}

/**
 * The runner's own name for a test case:
 * - pytest with `file=` (junit_family=xunit1): the node id `file::Class::name`,
 *   built from the file and the classname's part after the file's module path;
 * - a case whose classname is its suite's name (vitest: the file): `file > suite > test`;
 * - otherwise `classname::name`, or `name` when there is no classname.
 */
function caseId(node: XmlNode, suite: Suite | undefined): string {
  const name = decodeXmlText(attr(node, "name") ?? "");
  const classname = decodeXmlText(attr(node, "classname") ?? "");
  const file = attr(node, "file");
  if (file !== undefined && file !== "") {
    const path = decodeXmlText(file);
    const module = modulePathOf(path);
    if (classname === module) return `${path}::${name}`;
    if (classname.startsWith(`${module}.`))
      return `${path}::${classname
        .slice(module.length + 1)
        .split(".")
        .join("::")}::${name}`;
  }
  if (classname === "") return name;
  if (suite !== undefined && classname === suite.name) return `${classname} > ${name}`;
  return `${classname}::${name}`;
}

/**
 * A unit that could not run, written as a test case: pytest's collection error
 * (`classname=""`, `<error message="collection failure">`, the module as name and
 * file) and vitest's failed test file (a failing case named by its file, in the
 * file's suite). The unit is the file when the report names one.
 */
function loadErrorUnit(node: XmlNode, suite: Suite | undefined, failure: XmlNode | null, error: XmlNode | null): string | null {
  const name = decodeXmlText(attr(node, "name") ?? "");
  const classname = decodeXmlText(attr(node, "classname") ?? "");
  if (error !== null && failure === null && classname === "" && attr(error, "message") === "collection failure") {
    const file = attr(node, "file");
    return file !== undefined && file !== "" ? decodeXmlText(file) : name;
  }
  if ((failure ?? error) !== null && name !== "" && classname === name && suite !== undefined && suite.name === name) return name;
  return null;
}

function classifyCase(node: XmlNode, chain: Suite[], walk: Walk, max: { failures: number; chars: number }): void {
  let failure: XmlNode | null = null;
  let error: XmlNode | null = null;
  let skipped = false;
  for (const child of childrenOf(node, "testcase")) {
    const tag = tagOf(child);
    if (tag === "failure") failure ??= child;
    else if (tag === "error") error ??= child;
    else if (tag === "skipped") skipped = true;
  }
  const outcome: Partial<Tally> = { tests: 1 };
  if (failure !== null) outcome.failures = 1;
  if (error !== null) outcome.errors = 1;
  // a failure or an error outweighs a skip marker on the same test case
  if (failure === null && error === null && skipped) outcome.skipped = 1;
  // the suites' attributes count every case, load errors too: they are cross-checked against all of them
  for (const counts of chain.map((s) => s.found)) {
    for (const key of COUNT_ATTRIBUTES) counts[key] += outcome[key] ?? 0;
  }
  const teardownOnly = failure === null && error !== null && (attr(error, "message") ?? "").startsWith("failed on teardown");
  if (teardownOnly) for (const s of chain) s.teardownOnly++;
  const suite = chain[chain.length - 1];
  const bad = failure ?? error;
  const badTag = failure !== null ? "failure" : "error";
  const unit = loadErrorUnit(node, suite, failure, error);
  if (unit !== null && bad !== null) {
    // the runner's own lines (the body), not the one-word attribute ("collection failure")
    const body = rawTextForDisplay(textOf(bad, badTag)).trim();
    walk.cases.loadError(unit, body !== "" ? body : decodeXmlText(attr(bad, "message") ?? ""));
    return;
  }
  for (const key of COUNT_ATTRIBUTES) walk.tally[key] += outcome[key] ?? 0;
  walk.cases.add(caseId(node, suite), bad !== null ? "failed" : outcome.skipped === 1 ? "skipped" : "passed");
  if (bad !== null) walk.failedCases++;
  if (bad !== null && walk.failures.length < max.failures) {
    const name = decodeXmlText(attr(node, "name") ?? "").trim();
    const classname = decodeXmlText(attr(node, "classname") ?? "").trim();
    const attrMessage = attr(bad, "message");
    const message = attrMessage !== undefined ? decodeXmlText(attrMessage) : rawTextForDisplay(textOf(bad, badTag));
    walk.failures.push({
      name: cap(classname !== "" && classname !== name ? `${classname}: ${name}` : name, max.chars),
      message: cap(message.trim(), max.chars),
    });
  }
}

interface Frame {
  node: XmlNode;
  tag: string;
  parent: string | null;
  chain: Suite[];
  inCase: boolean;
}

/** Walks the whole tree (iteratively), so a test case in an unexpected place is refused, never skipped. */
function walkReport(root: XmlNode, max: { failures: number; chars: number }): Walk {
  const walk: Walk = { suites: [], tally: { tests: 0, failures: 0, errors: 0, skipped: 0 }, cases: new CaseList(), failedCases: 0, failures: [] };
  const rootTag = tagOf(root);
  if (rootTag !== "testsuites" && rootTag !== "testsuite") {
    throw new Refusal("unparsable", `the root element is <${rootTag ?? "?"}>, not <testsuites> or <testsuite>`);
  }
  const stack: Frame[] = [{ node: root, tag: rootTag, parent: null, chain: [], inCase: false }];
  while (stack.length > 0) {
    const { node, tag, parent, chain, inCase } = stack.pop() as Frame;
    let nextChain = chain;
    if (tag === "testsuites" || tag === "testsuite" || tag === "testcase") {
      if (inCase) throw new Refusal("unparsable", `<${tag}> inside a <testcase>`);
      if (tag === "testsuites" && parent !== null) throw new Refusal("unparsable", "<testsuites> that is not the root element");
      if (tag === "testsuite" && parent !== null && parent !== "testsuites" && parent !== "testsuite") {
        throw new Refusal("unparsable", `<testsuite> inside <${parent}>`);
      }
      if (tag === "testcase" && parent !== "testsuite") throw new Refusal("unparsable", `<testcase> outside a <testsuite> (inside <${parent ?? "nothing"}>)`);
    }
    if (tag === "testsuites" || tag === "testsuite") {
      const suite: Suite = {
        label: describeSuite(tag, node),
        name: decodeXmlText(attr(node, "name") ?? ""),
        claimed: claimedCounts(tag, node),
        found: { tests: 0, failures: 0, errors: 0, skipped: 0 },
        teardownOnly: 0,
      };
      walk.suites.push(suite);
      nextChain = [...chain, suite];
    } else if (tag === "testcase") {
      classifyCase(node, chain, walk, max);
    }
    const children = childrenOf(node, tag);
    // pushed in reverse so they are visited in document order (failures are listed in report order)
    for (let k = children.length - 1; k >= 0; k--) {
      const child = children[k] as XmlNode;
      const childTag = tagOf(child);
      if (childTag === null) continue;
      stack.push({ node: child, tag: childTag, parent: tag, chain: nextChain, inCase: inCase || tag === "testcase" });
    }
  }
  return walk;
}

function crossCheck(walk: Walk): string | null {
  for (const suite of walk.suites) {
    const { failures, errors } = suite.claimed;
    // Where a failed assertion is a "failure" and where an "error" is the reporter's own convention
    // (mocha's xunit counts every <failure> in errors="N"): a suite that claims both is held to their
    // sum, which is what decides the verdict. One that claims only one of them is held to it alone.
    const bothClaimed = failures !== undefined && errors !== undefined;
    if (bothClaimed && failures + errors !== suite.found.failures + suite.found.errors) {
      return `${suite.label} says failures="${failures}" errors="${errors}" but its test cases count ${suite.found.failures} failures and ${suite.found.errors} errors`;
    }
    for (const key of COUNT_ATTRIBUTES) {
      if (bothClaimed && (key === "failures" || key === "errors")) continue;
      const claimed = suite.claimed[key];
      if (claimed === undefined || claimed === suite.found[key]) continue;
      // pytest 7's double count of a passing test whose teardown errors (see Suite.teardownOnly)
      if (key === "tests" && claimed > suite.found[key] && claimed <= suite.found[key] + suite.teardownOnly) continue;
      return `${suite.label} says ${key}="${claimed}" but its test cases count ${suite.found[key]}`;
    }
  }
  return null;
}

/** Parses report bytes already read from the sandbox (or why there are none). Total: never throws. */
export function parseJunitXml(file: ReportFile, opts: ReportParseOptions = {}): TestReportSummary {
  const o = resolveParseOptions(opts);
  if (file.status !== "read") {
    const r = reportFileRefusal(file, o.maxReportBytes);
    return refused("junit_xml", r.refusal, r.problem);
  }
  const bytes = file.bytes;
  if (bytes.byteLength > o.maxReportBytes) {
    return refused("junit_xml", "too_large", `the report is ${bytes.byteLength} bytes, over the ${o.maxReportBytes}-byte cap; it was not parsed`);
  }
  let xml: string;
  try {
    // fatal: a report that is not UTF-8 is not read with replacement characters
    xml = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return refused("junit_xml", "unparsable", "the report is not UTF-8 text");
  }
  if (xml.trim() === "") return refused("junit_xml", "empty", "the report file is empty");
  try {
    return parseText(xml, o);
  } catch (err) {
    if (err instanceof Refusal) return refused("junit_xml", err.kind, `JUnit report refused: ${err.problem}`);
    // fast-xml-parser's own limits (nesting depth, reserved names) and anything unforeseen
    return refused("junit_xml", "unparsable", `the report could not be parsed as XML (${err instanceof Error ? err.message.slice(0, 200) : "unknown error"})`);
  }
}

function parseText(xml: string, o: Required<ReportParseOptions>): TestReportSummary {
  const scan = scanMarkup(xml);
  if (scan.declaration) {
    return refused("junit_xml", "unparsable", "the report contains a markup declaration (<!DOCTYPE or <!ENTITY ...); DTDs are never processed");
  }
  if (scan.root === null) return refused("junit_xml", "unparsable", "the report holds no XML element");
  if (scan.maxDepth > MAX_DEPTH)
    return refused("junit_xml", "unparsable", `the report nests elements ${scan.maxDepth} deep; a JUnit report needs at most ${MAX_DEPTH}`);
  if (scan.elements > MAX_ELEMENTS || scan.attributes > MAX_ATTRIBUTES) {
    return refused(
      "junit_xml",
      "unparsable",
      `the report has ${scan.elements} elements and ${scan.attributes} attributes; at most ${MAX_ELEMENTS} and ${MAX_ATTRIBUTES} are read`,
    );
  }
  if (scan.longestAttribute > MAX_ATTRIBUTE_CHARS) {
    return refused(
      "junit_xml",
      "unparsable",
      `the report has an attribute value of ${scan.longestAttribute} characters; at most ${MAX_ATTRIBUTE_CHARS} are read`,
    );
  }
  if (contentAfterRoot(xml, scan)) return refused("junit_xml", "unparsable", "the report has content after its root element");
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: false });
  if (valid !== true) {
    // the validator's message can quote the whole stack of open tags
    const why = `${valid.err.msg.slice(0, 120)} at line ${valid.err.line}, column ${valid.err.col}`;
    if (scan.rootEnd === -1) return refused("junit_xml", "truncated", `the report ends before its root element is closed (${why})`);
    return refused("junit_xml", "unparsable", `the report is not well-formed XML: ${why}`);
  }
  const top = (new XMLParser(PARSER_OPTIONS).parse(xml) as XmlNode[]).filter((n) => tagOf(n) !== null);
  if (top.length !== 1) return refused("junit_xml", "unparsable", `the report has ${top.length} root elements`);
  const walk = walkReport(top[0] as XmlNode, { failures: o.maxFailures, chars: o.maxMessageChars });
  const disagreement = crossCheck(walk);
  if (disagreement !== null) return refused("junit_xml", "inconsistent", `JUnit report refused: ${disagreement}`, walk.failures);
  const t = walk.tally;
  const failed = walk.failedCases;
  return accepted(
    "junit_xml",
    { passed: t.tests - failed - t.skipped, failed, skipped: t.skipped, errors: t.errors },
    { failures: walk.failures, listed: walk.cases.done() },
  );
}

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReportHtml } from "../../eval/src/report-html.js";
import { HOSTILE_DIFF, HOSTILE_ID, hostileReport, writeReportFolder } from "../../eval/src/report.testkit.js";
import { type Browser, findChromium, launchBrowser, pngSize } from "../kit/cdp.js";

// A real headless chromium (no Docker engine needed, so the unit tier), slow to start on a busy host: generous timeouts.
describe("eval-report.html in headless chromium", () => {
  let dir: string;
  let browser: Browser | null = null;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "report-html-browser-"));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it("renders with no console error and no request but the file itself, shows the summary, keeps a hostile case id and diff as text, and is screenshotted", async () => {
    const out = path.join(dir, "report");
    await writeReportFolder(out, hostileReport(), { "diffs/hostile.diff": HOSTILE_DIFF, "diffs/linkcheck.diff": "+fixed\n" });
    const file = await writeReportHtml(out);
    browser = await launchBrowser();
    const url = pathToFileURL(file).href;
    // whether any markup from the report became an element, or its onerror ran
    const probe = `JSON.stringify({ imgs: document.images.length, scripts: document.scripts.length, alerted: typeof window.__alerted })`;
    const page = await browser.visit(url, { evaluate: `window.alert = () => { window.__alerted = true }; ${probe}` });

    expect(page.errors).toEqual([]);
    expect(page.requests).toEqual([url]);
    expect(page.text).toContain("pass rate 50.0 % (1 of 2 cases passed)");
    expect(page.text).toContain("mini-agent eval report");
    // the hostile strings are on the page as the characters they are, markers for the bidi and control ones
    expect(page.text).toContain("x</script><img src=x onerror=alert(1)><U+202E>evil");
    expect(page.text).toContain('+<img src="https://example.com/t.png" onerror="alert(3)">');
    expect(page.text).not.toContain(HOSTILE_ID);
    expect(JSON.parse(page.evaluated as string)).toEqual({ imgs: 0, scripts: 0, alerted: "undefined" });

    const png = path.join(out, "eval-report.png");
    await writeFile(png, page.screenshot);
    const size = pngSize(page.screenshot);
    expect(size.width).toBeGreaterThan(400);
    expect(size.height).toBeGreaterThan(600);
    expect(page.screenshot.length).toBeGreaterThan(20_000);
  }, 180_000);

  it("a host without chromium fails with the install hint instead of skipping", () => {
    expect(() => findChromium({ PATH: path.join(dir, "no-such-bin") })).toThrow(/chromium is missing: run `bash scripts\/chromium-ensure.sh`/);
  });
});

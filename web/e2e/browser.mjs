// Debian's chromium under playwright-core, for the end-to-end test and the benchmark: no
// browser download, headless, no network but the loopback (every request to another host
// goes to a proxy on a closed loopback port and fails; each request to another origin than
// the daemon's is counted), a fresh profile in a temporary folder.
//
// Requests are watched, not intercepted: Playwright's request interception (context.route)
// sends every request through this Node.js process and turns the HTTP cache off, which
// made the benchmark measure Playwright (the first load's API answers waited 100-400 ms
// for it on a busy machine) and never the page's cached assets.
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.AIRTIME_CHROMIUM || "/usr/bin/chromium";

// Opens a browser context whose only reachable origin is `origin` (http://HOST:PORT).
// Returns {context, offsite, close}: offsite lists the URLs it refused.
export async function openBrowser(origin, { width = 1280, height = 860 } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM} (apt-get install chromium)`);
  const profile = mkdtempSync(join(tmpdir(), "airtime-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width, height },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
      // Everything but the loopback (which Chromium never sends to a proxy) to a closed port.
      "--proxy-server=http://127.0.0.1:9",
    ],
  });
  const offsite = [];
  context.on("request", (request) => {
    const url = request.url();
    if (!(url.startsWith(origin + "/") || url === origin)) offsite.push(url);
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, offsite, close };
}

// Command-line flags --name value into an object.
export function flags(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)$/.exec(argv[i]);
    if (!m || i + 1 >= argv.length) throw new Error(`unexpected argument '${argv[i]}'`);
    out[m[1]] = argv[++i];
  }
  return out;
}

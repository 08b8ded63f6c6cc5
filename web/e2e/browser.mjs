// Debian's chromium under playwright-core, for the end-to-end test and the benchmark: no
// browser download, headless, no network but the daemon's address (every other request is
// aborted and counted), a fresh profile in a temporary folder.
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
    ],
  });
  const offsite = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin + "/") || url === origin) return route.continue();
    offsite.push(url);
    return route.abort();
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

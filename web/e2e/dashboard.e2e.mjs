// The dashboard in a real browser against a running daemon: loads the page, signs in with a
// token, checks that the figures it shows are the API's, clicks through every view, checks
// that no tenant-written text became markup or script, and saves a screenshot of each view.
// tests/e2e/dashboard_e2e_test.cc starts the daemon, fills it and runs this.
//
// Usage: node e2e/dashboard.e2e.mjs --addr HOST:PORT --token ADMIN_TOKEN --out DIR
//          [--tenant NAME --tenant-token TOKEN] [--hostile NAME]
// Prints one line per check; exits 1 when one failed (each failure says what differed).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { flags, openBrowser } from "./browser.mjs";

const opt = flags(process.argv.slice(2));
for (const k of ["addr", "token", "out"]) if (!opt[k]) throw new Error(`--${k} is required`);
const origin = `http://${opt.addr}`;
mkdirSync(opt.out, { recursive: true });

let failures = 0;
function check(ok, what, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${detail ? `: ${detail}` : ""}`);
  if (!ok) failures++;
}

async function api(path, token = opt.token) {
  const r = await fetch(origin + path, { headers: { Authorization: `Bearer ${token}` } });
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status} ${await r.text()}`);
  return path === "/metrics" ? r.text() : r.json();
}

const fixed3 = (x) => (x === null || x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(3));

// The page's own reads, to compare what it shows with what it was told.
function recordResponses(page) {
  const seen = { ledger: [], holds: [], active: [] };
  page.on("response", async (res) => {
    const url = new URL(res.url());
    if (!res.ok()) return;
    try {
      if (url.pathname === "/v1/ledger") seen.ledger.push(await res.json());
      if (url.pathname === "/v1/holds") seen.holds.push(await res.json());
      if (url.pathname === "/v1/workloads") seen.active.push(await res.json());
    } catch {
      // a response whose body is gone (navigation): not needed
    }
  });
  return seen;
}

// What would betray an injection: dialogs, page errors, CSP reports, stray elements.
function watchForInjection(page, label) {
  const events = [];
  page.on("dialog", async (d) => {
    events.push(`${label}: a ${d.type()} dialog opened: ${d.message()}`);
    await d.dismiss();
  });
  page.on("pageerror", (e) => events.push(`${label}: page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !/Failed to load resource.*(404|401)/.test(m.text()))
      events.push(`${label}: console error: ${m.text()}`);
  });
  return events;
}

async function signIn(page, token) {
  await page.goto(origin + "/");
  await page.waitForSelector("#login:not([hidden])");
  await page.fill("#token", token);
  await page.click('[data-testid="sign-in"]');
}

async function main() {
  const started = Date.now();
  // The page's own headers.
  const head = await fetch(origin + "/");
  const csp = head.headers.get("content-security-policy") || "";
  check(head.status === 200, "GET / answers 200 without a token", String(head.status));
  check(/script-src 'self'/.test(csp) && !/unsafe/.test(csp), "the page has a strict CSP", csp);

  const { context, offsite, close } = await openBrowser(origin);
  const page = await context.newPage();
  const problems = watchForInjection(page, "admin");
  const seen = recordResponses(page);

  // A wrong token is refused with a message, and the page asks again.
  await signIn(page, "not-a-token-0000000000");
  await page.waitForFunction(() => document.getElementById("login-error")?.textContent !== "");
  const refused = await page.textContent("#login-error");
  check(/refused/.test(refused ?? ""), "a wrong token is refused on the page", refused ?? "");
  await page.screenshot({ path: join(opt.out, "login.png") });

  await signIn(page, opt.token);
  await page.waitForSelector("html[data-ready='1']", { timeout: 15000 });
  const stored = await page.evaluate(() => sessionStorage.getItem("airtime.token"));
  check(stored === opt.token, "the token is kept in sessionStorage");

  // GPUs.
  const gpus = (await api("/v1/gpus")).gpus;
  const shownCount = await page.textContent('[data-testid="gpu-count"]');
  check(shownCount === String(gpus.length), "GPU count shown = /v1/gpus", `${shownCount} vs ${gpus.length}`);
  const tiles = await page.$$eval(".gpu-map .tile", (ts) => ts.map((t) => ({ uuid: t.dataset.uuid, state: t.dataset.state })));
  check(tiles.length === gpus.length, "one tile per GPU", `${tiles.length}`);
  const heldApi = gpus.filter((g) => g.allocations.length > 0).map((g) => g.uuid).sort();
  const heldShown = tiles.filter((t) => t.state !== "free").map((t) => t.uuid).sort();
  check(JSON.stringify(heldApi) === JSON.stringify(heldShown), "held tiles = GPUs with allocations", `${heldShown.length} vs ${heldApi.length}`);
  const held = gpus.find((g) => g.allocations.length > 0);
  if (held) {
    await page.click(`.tile[data-uuid="${held.uuid}"]`);
    const detail = await page.textContent(".gpu-detail");
    check(detail.includes(held.uuid) && held.allocations.every((a) => detail.includes(a.name)), "a tile opens its GPU's holders", held.uuid);
  }
  await page.waitForSelector(".history-cluster .uplot", { timeout: 5000 }).catch(() => {});
  check((await page.$$(".history-cluster .uplot canvas")).length > 0, "the day's allocation/utilization chart is drawn");
  await page.screenshot({ path: join(opt.out, "gpus.png"), fullPage: true });

  // Ledger.
  await page.click('[data-testid="tab-ledger"]');
  await page.waitForSelector("#view-ledger:not([hidden]) svg.waterfall");
  const shownReturn = await page.textContent('[data-testid="ledger-return"]');
  const returns = seen.ledger.map((l) => fixed3(l.return_per_gpu_hour));
  check(returns.includes(shownReturn), "return per GPU-hour shown = /v1/ledger's", `${shownReturn} in [${returns.join(", ")}]`);
  const bars = await page.$$eval("svg.waterfall rect.bar", (rs) => rs.length);
  check(bars >= 8, "the waterfall has the installed bar and a bar per bucket", String(bars));
  await page.selectOption('[data-testid="ledger-window-select"]', "page");
  const windowText = await page.textContent('[data-testid="ledger-window"]');
  check(/UTC to .*UTC/.test(windowText ?? ""), "a shorter window can be chosen", windowText ?? "");
  await page.selectOption('[data-testid="ledger-window-select"]', "all");
  await page.screenshot({ path: join(opt.out, "ledger.png"), fullPage: true });

  // Queue.
  await page.click('[data-testid="tab-queue"]');
  await page.waitForSelector("#view-queue:not([hidden]) tr.workload");
  const active = await api("/v1/workloads?state=active");
  const shownActive = await page.textContent('[data-testid="active-count"]');
  check(shownActive === String(active.workloads.length), "active workloads shown = /v1/workloads?state=active", `${shownActive} vs ${active.workloads.length}`);
  const queuedApi = active.workloads.filter((w) => w.state === "queued").length;
  const queuedShown = await page.$$eval("tr.workload.queued", (rs) => rs.length);
  check(queuedShown === queuedApi, "queued rows = queued workloads of the API", `${queuedShown} vs ${queuedApi}`);
  const names = await page.$$eval("tr.workload td.name", (tds) => tds.map((td) => td.textContent));
  for (const w of active.workloads) check(names.includes(w.name), "the queue shows, as text, the workload", JSON.stringify(w.name));
  const target = active.workloads.find((w) => w.name === opt.hostile) ?? active.workloads.find((w) => w.state === "queued") ?? active.workloads[0];
  await page.click(`tr.workload[data-id="${target.id}"]`);
  await page.waitForSelector(`tr.detail[data-detail-for="${target.id}"] [data-testid="explanation"]`);
  const shownExplanation = await page.textContent(`tr.detail[data-detail-for="${target.id}"] [data-testid="explanation"]`);
  const full = await api(`/v1/workloads/${target.id}`);
  check(shownExplanation === full.explanation, "a row opens the full explanation of /v1/workloads/{id}", JSON.stringify(shownExplanation).slice(0, 120));
  await page.screenshot({ path: join(opt.out, "queue.png"), fullPage: true });
  // The README's picture (docs/img/dashboard.png): the top of this view, small.
  await page.setViewportSize({ width: 1100, height: 540 });
  await page.screenshot({ path: join(opt.out, "dashboard.png") });
  await page.setViewportSize({ width: 1280, height: 860 });

  // The 3 a.m. decisions.
  await page.click('[data-testid="tab-holds"]');
  await page.waitForSelector("#view-holds:not([hidden]) table.holds-services thead");
  const kept = await page.textContent('[data-testid="holds-kept"]');
  check(seen.holds.map((h) => String(h.decisions_kept)).includes(kept), "calls kept shown = /v1/holds's", kept ?? "");
  await page.screenshot({ path: join(opt.out, "holds.png"), fullPage: true });

  // Tenants.
  await page.click('[data-testid="tab-tenants"]');
  await page.waitForSelector("#view-tenants:not([hidden]) table.tenants tbody");
  const metrics = await api("/metrics");
  const tenantNames = [...metrics.matchAll(/^airtime_tenant_allocated_gpus\{tenant="([^"]*)"\}/gm)].map((m) => m[1]);
  const shownTenants = await page.$$eval("table.tenants tbody tr[data-tenant]", (rs) => rs.map((r) => r.dataset.tenant));
  check(tenantNames.every((t) => shownTenants.includes(t)) && tenantNames.length > 0, "every tenant of /metrics has a row", `${shownTenants.join(",")} vs ${tenantNames.join(",")}`);
  await page.screenshot({ path: join(opt.out, "tenants.png"), fullPage: true });

  // Nothing tenant-written became markup or script, anywhere.
  await page.click('[data-testid="tab-queue"]');
  const dom = await page.evaluate(() => ({
    imgs: document.querySelectorAll("img").length,
    scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
    handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length,
  }));
  check(dom.imgs === 0, "no <img> element was injected", String(dom.imgs));
  check(dom.scripts.length === 1 && /^\/assets\//.test(dom.scripts[0] ?? ""), "the only script is the page's own", dom.scripts.join(","));
  check(dom.handlers === 0, "no element carries an on* handler attribute", String(dom.handlers));

  // A tenant's token: its own workloads only.
  if (opt["tenant-token"]) {
    const tpage = await context.newPage();
    problems.push(...watchForInjection(tpage, "tenant"));
    await tpage.evaluate(() => sessionStorage.clear()).catch(() => {});
    await signIn(tpage, opt["tenant-token"]);
    await tpage.waitForSelector("html[data-ready='1']", { timeout: 15000 });
    await tpage.click('[data-testid="tab-queue"]');
    const own = await api("/v1/workloads?state=active", opt["tenant-token"]);
    const tshown = await tpage.textContent('[data-testid="active-count"]');
    check(tshown === String(own.workloads.length), "a tenant's token shows its own active workloads", `${tshown} vs ${own.workloads.length}`);
    const tenants = await tpage.$$eval("tr.workload td:nth-child(3)", (tds) => [...new Set(tds.map((td) => td.textContent))]);
    check(tenants.every((t) => t === opt.tenant), "and no other tenant's", tenants.join(","));
    await tpage.screenshot({ path: join(opt.out, "tenant-queue.png"), fullPage: true });
    await tpage.close();
  }

  await page.close();
  await close();
  check(problems.length === 0, "no dialog, page error or console error", problems.join("; "));
  check(offsite.length === 0, "the page asked for nothing but the daemon", offsite.join(", "));
  writeFileSync(join(opt.out, "result.json"), JSON.stringify({ failures, seconds: (Date.now() - started) / 1000 }, null, 1));
  console.log(`${failures === 0 ? "passed" : `${failures} check(s) failed`} in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${opt.out}`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`dashboard e2e: ${e.stack || e}`);
  process.exit(1);
});

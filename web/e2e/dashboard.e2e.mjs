// The dashboard in a real browser against a running daemon: loads the page, signs in with a
// token, checks that the figures it shows are the API's, clicks through every view, checks
// that no tenant-written text became markup or script, and saves a screenshot of each view.
// tests/e2e/dashboard_e2e_test.cc starts the daemon, fills it and runs this.
//
// With --service NAME it checks only how the queue groups a service with model variants:
// the service's row (its members' replicas and GPUs summed, its mix as `describe` gives it)
// with its members' rows under it.
//
// Usage: node e2e/dashboard.e2e.mjs --addr HOST:PORT --token ADMIN_TOKEN --out DIR
//          [--tenant NAME --tenant-token TOKEN] [--hostile NAME] [--service NAME]
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
// web/src/format.ts's money() and share(), to read the page's figures back.
const smallDigits = (x, digits) => {
  const a = Math.abs(x);
  return a >= 1 || a === 0 ? digits : Math.min(8, Math.max(digits, digits - Math.floor(Math.log10(a))));
};
const finite = (x) => x !== null && x !== undefined && Number.isFinite(x);
const money = (x) => (finite(x) ? x.toFixed(smallDigits(x, 2)) : "-");
const share = (x) => (finite(x) ? `${(x * 100).toFixed(smallDigits(x * 100, 1))}%` : "-");

// The page's own reads, to compare what it shows with what it was told.
function recordResponses(page) {
  const seen = { ledger: [], holds: [], active: [], gpus: [] };
  page.on("response", async (res) => {
    const url = new URL(res.url());
    if (!res.ok()) return;
    try {
      if (url.pathname === "/v1/ledger") seen.ledger.push(await res.json());
      if (url.pathname === "/v1/gpus") seen.gpus.push((await res.json()).gpus);
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

// The queue of a daemon running service `name` with model variants: one group, the
// service's row then its members' rows, figures from the page's own reads and the API's.
async function serviceGroup(name) {
  const started = Date.now();
  const { context, offsite, close } = await openBrowser(origin);
  const page = await context.newPage();
  const problems = watchForInjection(page, "admin");
  const seen = recordResponses(page);
  await signIn(page, opt.token);
  await page.waitForSelector("html[data-ready='1']", { timeout: 15000 });
  await page.click('[data-testid="tab-queue"]');
  const sel = `tr.service[data-service="${name}"]`;
  await page.waitForSelector(`#view-queue:not([hidden]) ${sel}`);
  const before = await api(`/v1/workloads/${encodeURIComponent(name)}`);
  const shown = await page.evaluate((sel) => {
    const rows = [...document.querySelectorAll("table.queue tbody tr:not(.detail)")];
    const at = rows.findIndex((r) => r.matches(sel));
    const row = rows[at];
    const members = [];
    for (const r of rows.slice(at + 1)) {
      if (!r.classList.contains("member")) break;
      members.push({ name: r.querySelector("td.name")?.textContent, service: r.dataset.service, id: Number(r.dataset.id) });
    }
    return {
      groups: document.querySelectorAll(sel).length,
      name: row?.querySelector("td.name")?.textContent,
      replicas: row?.querySelector('[data-testid="service-replicas"]')?.textContent,
      mix: row?.querySelector('[data-testid="service-mix"]')?.textContent,
      members,
      memberRows: document.querySelectorAll("tr.workload.member").length,
      others: rows.filter((r) => r.classList.contains("workload") && !r.classList.contains("member")).map((r) => r.querySelector("td.name")?.textContent),
    };
  }, sel);
  const after = await api(`/v1/workloads/${encodeURIComponent(name)}`);
  check(shown.groups === 1 && shown.name === name, "the service has one row, named as the service", `${shown.groups} ${shown.name}`);
  const members = before.members.map((m) => m.name);
  check(JSON.stringify(shown.members.map((m) => m.name)) === JSON.stringify(members) && shown.members.every((m) => m.service === name), "its members' rows follow it, in variant order", `${shown.members.map((m) => m.name).join(", ")} vs ${members.join(", ")}`);
  check(shown.memberRows === members.length, "no member is shown apart from its service", String(shown.memberRows));
  // The figures of one list read the page drew: summed over the members.
  const sums = seen.active.map((list) => {
    const ms = list.workloads.filter((w) => w.service === name);
    const r = ms.reduce((a, w) => [a[0] + w.gpus.length, a[1] + (w.replicas?.running ?? 0), a[2] + (w.replicas?.target ?? 0)], [0, 0, 0]);
    return { replicas: `${r[0]} r${r[1]}/${r[2]}`, mix: ms.find((w) => w.mix)?.mix };
  });
  check(sums.some((x) => x.replicas === shown.replicas), "the service's replicas and GPUs = its members' summed", `${shown.replicas} in [${sums.map((x) => x.replicas).join(" | ")}]`);
  const view = (v) => `${v.gpus.length} r${v.replicas?.running}/${v.replicas?.target}`;
  check([before, after].some((v) => view(v) === shown.replicas), "= GET /v1/workloads/{service}'s replicas and GPUs", `${shown.replicas} vs ${view(before)}`);
  check(!!shown.mix && shown.mix !== "-" && sums.some((x) => x.mix === shown.mix), "the service's mix is shown, as its members' view gives it", JSON.stringify(shown.mix));
  check([before.mix, after.mix].includes(shown.mix), "the mix shown = the service's `mix` (what describe prints)", `${JSON.stringify(shown.mix)} vs ${JSON.stringify(before.mix)}`);
  check(shown.others.length > 0 && !shown.others.some((n) => n.startsWith(`${name}/`)), "other workloads keep rows of their own", shown.others.join(", "));
  // The service's row opens the service's view.
  await page.click(sel);
  await page.waitForSelector(`tr.detail[data-detail-for="service:${name}"] [data-testid="explanation"]`);
  const detailMix = await page.textContent(`tr.detail[data-detail-for="service:${name}"] [data-testid="detail-mix"]`);
  check([before.mix, after.mix].includes(detailMix), "the service's row opens its view, with its mix", JSON.stringify(detailMix));
  await page.screenshot({ path: join(opt.out, "service-queue.png"), fullPage: true });
  await page.close();
  await close();
  check(problems.length === 0, "no dialog, page error or console error", problems.join("; "));
  check(offsite.length === 0, "the page asked for nothing but the daemon", offsite.join(", "));
  console.log(`${failures === 0 ? "passed" : `${failures} check(s) failed`} in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${opt.out}`);
  process.exit(failures === 0 ? 0 : 1);
}

async function main() {
  if (opt.service) return serviceGroup(opt.service);
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
  const tiles = await page.$$eval(".gpu-map .tile", (ts) =>
    ts.map((t) => ({
      uuid: t.dataset.uuid,
      bucket: t.dataset.bucket,
      label: t.querySelector(".tile-bucket")?.textContent,
      title: t.getAttribute("title"),
      colour: getComputedStyle(t).backgroundColor,
    })),
  );
  check(tiles.length === gpus.length, "one tile per GPU", `${tiles.length}`);
  // Each tile's bucket is the one /v1/gpus gave its GPU (in the read the page drew).
  const bucketsOf = (read) => read.map((g) => `${g.uuid}=${g.bucket ?? "unscheduled"}`).sort().join(" ");
  const shownBuckets = tiles.map((t) => `${t.uuid}=${t.bucket}`).sort().join(" ");
  const reads = seen.gpus.map(bucketsOf);
  check(reads.includes(shownBuckets), "each tile's ledger bucket = /v1/gpus's bucket of its GPU", `${shownBuckets} in [${reads.join(" | ")}]`);
  const drawn = seen.gpus.find((r) => bucketsOf(r) === shownBuckets) ?? gpus;
  for (const g of drawn.slice(0, 4)) {
    const t = tiles.find((x) => x.uuid === g.uuid);
    const parts = Object.entries(g.bucket_milli ?? {}).map(([b, m]) => `${b} ${(m / 1000).toFixed(3)}`);
    check(
      t?.label === (g.bucket ?? "unscheduled").replace(/_/g, " ") && parts.every((p) => t.title.includes(p)),
      `GPU ${g.index}'s tile is labelled with its bucket and its split`,
      `${t?.label}; ${t?.title?.split("\n")[1]} vs ${g.bucket} ${parts.join(", ")}`,
    );
  }
  const colourOf = new Map();
  let coloursAgree = true;
  for (const t of tiles) {
    if (colourOf.has(t.bucket) && colourOf.get(t.bucket) !== t.colour) coloursAgree = false;
    colourOf.set(t.bucket, t.colour);
  }
  const distinct = new Set(colourOf.values()).size === colourOf.size;
  check(coloursAgree && distinct, "tiles of a bucket share a colour, and buckets differ", [...colourOf].map(([b, c]) => `${b} ${c}`).join(", "));
  const legend = await page.$$eval('[data-testid="gpu-legend"] .legend-item', (items) => items.map((i) => i.textContent));
  const expected = [...colourOf.keys()].map((b) => `${b}: ${tiles.filter((t) => t.bucket === b).length}`);
  check(expected.every((e) => legend.includes(e)) && legend.length === expected.length, "the legend counts the GPUs of each bucket", `${legend.join(", ")} vs ${expected.join(", ")}`);
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
  // The figures shown are one read of /v1/ledger's: return, value, cost, margin, and each
  // GPU type's break-even allocation.
  const shown = await page.evaluate(() => {
    const text = (id) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? null;
    return {
      ret: text("ledger-return"),
      value: text("ledger-value"),
      cost: text("ledger-cost"),
      margin: text("ledger-margin"),
      breakeven: Object.fromEntries([...document.querySelectorAll('[data-testid="ledger-types"] tr[data-type]')].map((r) => [r.dataset.type, r.querySelector('[data-testid="breakeven"]')?.textContent])),
    };
  });
  const expectedOf = (l) => ({
    ret: fixed3(l.return_per_gpu_hour),
    value: money(l.value),
    cost: money(l.costs?.cost),
    margin: money(l.costs?.margin),
    breakeven: Object.fromEntries((l.costs?.types ?? []).map((t) => [t.type, t.breakeven_allocation === null ? "none" : share(t.breakeven_allocation)])),
  });
  const match = seen.ledger.map(expectedOf).find((e) => JSON.stringify(e) === JSON.stringify(shown));
  check(match !== undefined, "return, value, cost, margin and break-even shown = one /v1/ledger read's", `${JSON.stringify(shown)} vs ${seen.ledger.map((l) => JSON.stringify(expectedOf(l))).join(" | ")}`);
  check(Object.keys(shown.breakeven).length > 0 && Object.values(shown.breakeven).some((b) => b !== "none"), "a GPU type that earned has a break-even allocation", JSON.stringify(shown.breakeven));
  const steps = await page.$$eval('svg[aria-label="value and cost waterfall"] rect.bar', (rs) => rs.map((r) => r.dataset.step));
  check(steps[0] === "value" && steps[steps.length - 1] === "margin" && steps.length >= 3, "the money waterfall goes from the value through the buckets' cost to the margin", steps.join(","));
  const bars = await page.$$eval('svg[aria-label="ledger waterfall"] rect.bar', (rs) => rs.length);
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

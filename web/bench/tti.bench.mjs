// Time to interactive of the dashboard in chromium, against a daemon (scripts/bench-dashboard.sh
// starts one with 1,000 fake GPUs and fills it): the page is opened with the token already in
// the tab's sessionStorage, and the figure is performance.now() (from the navigation's start)
// when the first refresh has fetched and rendered every view (window.airtimeReadyAt). Also
// times a switch to the queue view and the opening of a workload's explanation.
//
// Usage: node bench/tti.bench.mjs --addr HOST:PORT --token TOKEN [--fill N] [--runs 5]
//   --fill N   first submit N workloads (1-2 GPUs each, no command: they run virtually)
// Prints one line per run and the median.
import { flags, openBrowser } from "../e2e/browser.mjs";

const opt = flags(process.argv.slice(2));
const origin = `http://${opt.addr}`;
const runs = Number(opt.runs ?? 5);

async function fill(n) {
  const kinds = ["training", "batch", "finetune", "eval", "embed", "quantize"];
  const t0 = performance.now();
  for (let start = 0; start < n; start += 500) {
    const workloads = [];
    for (let i = start; i < Math.min(n, start + 500); i++)
      workloads.push({ name: `bench-${i}`, tenant: `team-${i % 7}`, kind: kinds[i % kinds.length], gpus: 1 + (i % 3 === 0 ? 1 : 0), work: "10h" });
    const r = await fetch(`${origin}/v1/workloads`, {
      method: "POST",
      headers: { Authorization: `Bearer ${opt.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ workloads }),
    });
    if (r.status !== 201) throw new Error(`submit: HTTP ${r.status} ${await r.text()}`);
  }
  console.log(`submitted ${n} workloads in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function counts() {
  const h = { Authorization: `Bearer ${opt.token}` };
  const gpus = (await (await fetch(`${origin}/v1/gpus`, { headers: h })).json()).gpus.length;
  const all = (await (await fetch(`${origin}/v1/workloads?limit=1`, { headers: h })).json()).total;
  const active = (await (await fetch(`${origin}/v1/workloads?state=active&limit=1`, { headers: h })).json()).total;
  return { gpus, all, active };
}

async function main() {
  if (opt.fill) await fill(Number(opt.fill));
  const c = await counts();
  console.log(`daemon: ${c.gpus} GPUs, ${c.all} workloads (${c.active} active)`);
  const { context, offsite, close } = await openBrowser(origin);
  await context.addInitScript((token) => sessionStorage.setItem("airtime.token", token), opt.token);
  const tti = [];
  for (let i = 0; i < runs; i++) {
    const page = await context.newPage();
    await page.goto(`${origin}/#gpus`);
    await page.waitForSelector("html[data-ready='1']", { timeout: 60000 });
    const ready = await page.evaluate(() => window.airtimeReadyAt);
    const steps = await page.evaluate(() => window.airtimeTimings ?? {});
    const nav = await page.evaluate(() => {
      const n = performance.getEntriesByType("navigation")[0];
      return n ? { html: n.responseEnd, dom: n.domContentLoadedEventEnd } : {};
    });
    // What each file and API call cost: when it was asked for, when its first and last byte
    // came (ms since navigation), and its size on the wire and decoded.
    const resources = await page.evaluate(() =>
      performance.getEntriesByType("resource").map((r) => ({
        name: new URL(r.name).pathname.replace(/^\/assets\/(.*)-[\w-]{8}\./, "/assets/$1."),
        start: r.startTime,
        first: r.responseStart,
        end: r.responseEnd,
        wire: r.transferSize,
        body: r.decodedBodySize,
      })),
    );
    const tiles = await page.$$eval(".gpu-map .tile", (t) => t.length);
    const t0 = performance.now();
    await page.click('[data-testid="tab-queue"]');
    await page.waitForSelector("#view-queue:not([hidden]) tr.workload");
    const id = await page.$eval("tr.workload", (r) => r.dataset.id);
    await page.click(`tr.workload[data-id="${id}"]`);
    await page.waitForSelector(`tr.detail[data-detail-for="${id}"] [data-testid="explanation"]`);
    const open = performance.now() - t0;
    console.log(`run ${i + 1}: interactive at ${ready.toFixed(0)} ms (${tiles} GPU tiles); queue view + one explanation ${open.toFixed(0)} ms${i === 0 ? " (cold cache)" : ""}`);
    const order = Object.entries({ html: nav.html, dom: nav.dom, ...steps }).filter(([, v]) => v !== undefined);
    console.log(`  steps (ms since navigation): ${order.map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")}`);
    const kb = (b) => `${(b / 1024).toFixed(0)} KB`;
    for (const r of resources.filter((x) => x.start <= ready))
      console.log(
        `  ${r.name}: asked ${r.start.toFixed(0)}, first byte ${r.first.toFixed(0)}, done ${r.end.toFixed(0)} ms; ${r.wire > 0 ? kb(r.wire) + " on the wire, " : "from cache, "}${kb(r.body)}`,
      );
    tti.push(ready);
    await page.close();
  }
  await close();
  if (offsite.length) throw new Error(`the page asked for other origins: ${offsite.join(", ")}`);
  const sorted = [...tti].sort((a, b) => a - b);
  console.log(`time to interactive, ${c.gpus} GPUs and ${c.all} workloads: median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms over ${runs} runs`);
}

main().catch((e) => {
  console.error(`bench: ${e.stack || e}`);
  process.exit(1);
});

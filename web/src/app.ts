// The airtime dashboard: asks for an API token (kept in sessionStorage), then reads the
// daemon's API every few seconds. Each refresh reads what the shown view needs first and
// draws it, then reads the rest; a hidden view is drawn when it is shown, from the latest
// reads, so that switching views needs no wait for the daemon.
import { ApiError, type Ledger, savedToken, saveToken, getJson, type Workload } from "./api";
import { byId, replace } from "./dom";
import { parseProm, tenantsFromMetrics } from "./prom";
import { type Data, KINDS, type Kind, NEEDS, PAGE_SIZE, type Reads, read, readHistory, VIEWS, type View, viewOfHash } from "./reads";
import { GpuView } from "./views/gpus";
import { renderHolds } from "./views/holds";
import { LedgerView } from "./views/ledger";
import { detailPath, QueueView } from "./views/queue";
import { renderTenants } from "./views/tenants";

const REFRESH_MS = 5000;

let token: string | null = savedToken();
let timer: number | undefined;
let inFlight = false;
let shown: View = viewOfHash(location.hash);
const data: Partial<Data> = {};
// Views whose reads changed since they were last drawn.
const stale = new Set<View>(VIEWS);

const gpuView = new GpuView(byId("view-gpus"), (uuid) => {
  readHistory(token ?? "", uuid)
    .then((h) => {
      data.history = h;
      gpuView.renderHistory(h);
    })
    .catch((e) => banner(e instanceof Error ? e.message : String(e)));
});
const ledgerView = new LedgerView(byId("view-ledger"));
const queueView = new QueueView(
  byId("view-queue"),
  (key) => getJson<Workload>(`/v1/workloads/${detailPath(key)}`, token ?? ""),
  () => void refresh(),
);

const mark = (step: string) => {
  if (window.airtimeReadyAt === undefined) (window.airtimeTimings ??= {})[step] = performance.now();
};

// Draws view `v` from the latest reads, when it has all it needs; returns whether it did.
function draw(v: View): boolean {
  if (!NEEDS[v].every((k) => data[k] !== undefined)) return false;
  const d = data as Data;
  switch (v) {
    case "gpus": {
      const prev = ledgerView.previous();
      gpuView.render(d.gpus, prev ? { prev, cur: d.ledger } : null);
      mark("map");
      gpuView.renderHistory(d.history);
      mark("chart");
      break;
    }
    case "ledger":
      ledgerView.render();
      break;
    case "queue":
      if (d.list.workloads.length === 0 && queueView.offset > 0) queueView.offset = 0; // the page emptied
      queueView.render(d.list, d.ledger.now);
      break;
    case "holds":
      renderHolds(byId("view-holds"), d.holds);
      break;
    case "tenants": {
      const tenants = tenantsFromMetrics(parseProm(d.metrics));
      renderTenants(byId("view-tenants"), tenants.rows, tenants.quotas, d.gpus.length);
      break;
    }
  }
  stale.delete(v);
  return true;
}

function showView(v: View) {
  shown = v;
  for (const name of VIEWS) {
    byId(`view-${name}`).hidden = name !== v;
    const tab = document.querySelector(`nav button[data-view="${name}"]`);
    tab?.setAttribute("aria-selected", String(name === v));
  }
  if (location.hash !== `#${v}`) history.replaceState(null, "", `#${v}`);
  if (stale.has(v)) draw(v);
}

function banner(message: string | null) {
  const b = byId("banner");
  b.hidden = message === null;
  replace(b, message ?? "");
}

function signedIn(yes: boolean) {
  byId("login").hidden = yes;
  byId("app").hidden = !yes;
  byId("signout").hidden = !yes;
}

// Reads `kinds` (taking those already under way from `early`) and stores them; the views
// that read them become stale.
async function readAll(kinds: Kind[], t: string, early: Reads | null) {
  const ctx = { queueOffset: queueView.offset, queueLimit: PAGE_SIZE, gpu: gpuView.selectedUuid() };
  const got = await Promise.all(kinds.map((k) => (early?.[k] as Promise<unknown> | undefined) ?? read(k, t, ctx)));
  kinds.forEach((k, i) => {
    (data as Record<Kind, unknown>)[k] = got[i];
    if (k === "ledger") ledgerView.add(got[i] as Ledger);
    for (const v of VIEWS) if (NEEDS[v].includes(k)) stale.add(v);
  });
}

async function refresh(early: Reads | null = null) {
  if (!token || inFlight) return;
  inFlight = true;
  const t = token;
  try {
    // First what the shown view needs, and draw it; then the rest.
    const first = shown;
    mark("start");
    await readAll(NEEDS[first], t, early);
    mark("fetched");
    if (stale.has(shown)) draw(shown);
    if (window.airtimeReadyAt === undefined && shown === first) {
      mark("drawn");
      window.airtimeReadyAt = performance.now();
      document.documentElement.dataset.ready = "1";
    }
    await readAll(
      KINDS.filter((k) => !NEEDS[first].includes(k)),
      t,
      null,
    );
    mark("rest");
    if (stale.has(shown)) draw(shown);
    if (window.airtimeReadyAt === undefined) {
      // The view was switched during the first read: ready once it is drawn.
      window.airtimeReadyAt = performance.now();
      document.documentElement.dataset.ready = "1";
    }
    replace(byId("updated"), `updated ${new Date(data.ledger?.now ?? Date.now()).toISOString().slice(11, 19)} UTC`);
    banner(null);
    window.airtimeRefreshes = (window.airtimeRefreshes ?? 0) + 1;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      saveToken(null);
      token = null;
      signedIn(false);
      replace(byId("login-error"), "The daemon refused this token: " + e.message);
    } else {
      banner(e instanceof Error ? e.message : String(e));
    }
  } finally {
    inFlight = false;
  }
}

function begin(early: Reads | null) {
  signedIn(true);
  void refresh(early);
  window.clearInterval(timer);
  timer = window.setInterval(() => {
    if (!document.hidden) void refresh();
  }, REFRESH_MS);
}

// Called once by the entry (main.ts) with the reads it started, if any.
export function start(early: Reads | null) {
  byId<HTMLFormElement>("login-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = byId<HTMLInputElement>("token");
    const value = input.value.trim();
    if (!value) return;
    token = value;
    saveToken(value);
    input.value = "";
    replace(byId("login-error"), "");
    begin(null);
  });
  byId("signout").addEventListener("click", () => {
    saveToken(null);
    token = null;
    window.clearInterval(timer);
    signedIn(false);
  });
  byId("refresh").addEventListener("click", () => void refresh());
  for (const tab of document.querySelectorAll<HTMLButtonElement>("nav button[data-view]")) {
    tab.addEventListener("click", () => showView(tab.dataset.view as View));
  }
  showView(shown);
  if (token) begin(early);
  else signedIn(false);
}

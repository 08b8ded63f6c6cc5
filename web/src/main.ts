// The airtime dashboard: asks for an API token (kept in sessionStorage), then reads the
// daemon's API every few seconds and renders each view. Every view is rendered on every
// refresh, shown or not, so that switching views is instant.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import {
  ApiError,
  type Gpu,
  type GpuHistory,
  getJson,
  getText,
  type Holds,
  type Ledger,
  savedToken,
  saveToken,
  type Workload,
  type WorkloadList,
} from "./api";
import { byId, replace } from "./dom";
import { parseProm, tenantsFromMetrics } from "./prom";
import { GpuView } from "./views/gpus";
import { renderHolds } from "./views/holds";
import { LedgerView } from "./views/ledger";
import { PAGE_SIZE, QueueView } from "./views/queue";
import { renderTenants } from "./views/tenants";

const REFRESH_MS = 5000;
const VIEWS = ["gpus", "ledger", "queue", "holds", "tenants"] as const;
type View = (typeof VIEWS)[number];

declare global {
  interface Window {
    // performance.now() when the first refresh had rendered every view (the benchmark's
    // time-to-interactive), and the number of refreshes rendered.
    airtimeReadyAt?: number;
    airtimeRefreshes?: number;
    // The first refresh's steps: ms since navigation when each ended (the benchmark prints them).
    airtimeTimings?: Record<string, number>;
  }
}

let token: string | null = savedToken();
let timer: number | undefined;
let inFlight = false;

const gpuView = new GpuView(byId("view-gpus"), () => {
  historyOrNull()
    .then((h) => gpuView.renderHistory(h))
    .catch((e) => banner(e instanceof Error ? e.message : String(e)));
});
const ledgerView = new LedgerView(byId("view-ledger"));
const queueView = new QueueView(
  byId("view-queue"),
  (id) => getJson<Workload>(`/v1/workloads/${id}`, token ?? ""),
  () => void refresh(),
);

function showView(v: View) {
  for (const name of VIEWS) {
    byId(`view-${name}`).hidden = name !== v;
    const tab = document.querySelector(`nav button[data-view="${name}"]`);
    tab?.setAttribute("aria-selected", String(name === v));
  }
  if (location.hash !== `#${v}`) history.replaceState(null, "", `#${v}`);
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

// The cluster's day, and the picked GPU's; null from a daemon without the endpoint.
async function historyOrNull(): Promise<GpuHistory | null> {
  const gpu = gpuView.selectedUuid();
  const query = gpu ? `?gpu=${encodeURIComponent(gpu)}` : "";
  try {
    return await getJson<GpuHistory>(`/v1/gpus/history${query}`, token ?? "");
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

async function refresh() {
  if (!token || inFlight) return;
  if (window.airtimeReadyAt === undefined) (window.airtimeTimings ??= {}).start = performance.now();
  inFlight = true;
  const t = token;
  try {
    const [gpus, ledger, list, holds, metrics, hist] = await Promise.all([
      getJson<{ gpus: Gpu[] }>("/v1/gpus", t),
      getJson<Ledger>("/v1/ledger", t),
      getJson<WorkloadList>(`/v1/workloads?state=active&limit=${PAGE_SIZE}&offset=${queueView.offset}`, t),
      getJson<Holds>("/v1/holds?limit=500", t),
      getText("/metrics", t),
      historyOrNull(),
    ]);
    const first = window.airtimeReadyAt === undefined;
    const mark = (step: string) => {
      if (first) (window.airtimeTimings ??= {})[step] = performance.now();
    };
    mark("fetched");
    if (list.workloads.length === 0 && queueView.offset > 0) {
      queueView.offset = 0; // the page emptied: back to the first
    }
    ledgerView.render(ledger);
    mark("ledger");
    const prev = ledgerView.previous();
    gpuView.render(gpus.gpus, prev ? { prev, cur: ledger } : null);
    mark("gpus");
    gpuView.renderHistory(hist);
    mark("history");
    queueView.render(list, ledger.now);
    mark("queue");
    renderHolds(byId("view-holds"), holds);
    mark("holds");
    const tenants = tenantsFromMetrics(parseProm(metrics));
    renderTenants(byId("view-tenants"), tenants.rows, tenants.quotas, gpus.gpus.length);
    mark("tenants");
    replace(byId("updated"), `updated ${new Date(ledger.now).toISOString().slice(11, 19)} UTC`);
    banner(null);
    window.airtimeRefreshes = (window.airtimeRefreshes ?? 0) + 1;
    if (window.airtimeReadyAt === undefined) {
      window.airtimeReadyAt = performance.now();
      document.documentElement.dataset.ready = "1";
    }
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

function start() {
  signedIn(true);
  void refresh();
  window.clearInterval(timer);
  timer = window.setInterval(() => {
    if (!document.hidden) void refresh();
  }, REFRESH_MS);
}

byId<HTMLFormElement>("login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = byId<HTMLInputElement>("token");
  const value = input.value.trim();
  if (!value) return;
  token = value;
  saveToken(value);
  input.value = "";
  replace(byId("login-error"), "");
  start();
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

const initial = location.hash.slice(1) as View;
showView(VIEWS.includes(initial) ? initial : "gpus");
if (token) start();
else signedIn(false);

// The GPU map: one tile per GPU, coloured by the ledger bucket holding most of it now (the
// daemon's per-GPU split of its ledger, GET /v1/gpus `bucket` and `bucket_milli`), with its
// measured utilization; and the allocation against measured utilization over the last day
// (GET /v1/gpus/history), for the cluster and for the GPU picked on the map.
import uPlot from "uplot";
import type { Gpu, GpuHistory, HistorySeries, Ledger } from "../api";
import { el, replace } from "../dom";
import { BUCKET_HELP, BUCKETS, type BucketName, percent, type LedgerSnapshot, ledgerWindow } from "../format";

// A GPU's tile class: its main bucket, or "unscheduled" (a type airtime does not know, or
// a daemon that reports no buckets).
function bucketOf(g: Gpu): BucketName | "unscheduled" {
  return g.bucket && (BUCKETS as readonly string[]).includes(g.bucket) ? (g.bucket as BucketName) : "unscheduled";
}

// "useful 0.25, idle_held 0.75" (GPUs), in the ledger's order.
function bucketText(g: Gpu): string {
  const m = g.bucket_milli ?? {};
  return BUCKETS.filter((b) => (m[b] ?? 0) > 0)
    .map((b) => `${b} ${((m[b] ?? 0) / 1000).toFixed(3)}`)
    .join(", ");
}

export class GpuView {
  private selected: string | null = null;
  private charts: uPlot[] = [];
  private lastGpus: Gpu[] = [];
  private lastHistory: GpuHistory | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly onSelect: (uuid: string) => void,
  ) {
    // One listener for the whole map (1,000 tiles need no 1,000 closures).
    root.querySelector(".gpu-map")!.addEventListener("click", (e) => {
      const tile = (e.target as Element).closest<HTMLElement>(".tile");
      if (!tile?.dataset.uuid) return;
      this.selected = tile.dataset.uuid;
      this.onSelect(tile.dataset.uuid);
      this.renderDetail();
      for (const t of this.root.querySelectorAll(".tile.selected")) t.classList.remove("selected");
      tile.classList.add("selected");
    });
  }

  selectedUuid(): string | null {
    return this.selected;
  }

  render(gpus: Gpu[], nowSplit: { prev: LedgerSnapshot; cur: Ledger } | null) {
    this.lastGpus = gpus;
    const counts = new Map<string, number>();
    const tiles = gpus.map((g) => {
      const bucket = bucketOf(g);
      counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
      const util = g.utilization;
      const known = util !== null && util !== undefined && Number.isFinite(util);
      const who = g.allocations.map((a) => `${a.name} (${a.tenant}) ${a.milli / 1000}`).join(", ");
      const title =
        `GPU ${g.index} ${g.type || g.model} ${g.uuid}\n` +
        (bucket === "unscheduled" ? "not scheduled by airtime" : `ledger now: ${bucketText(g)}`) +
        `; utilization ${known ? percent(util) : "not measured"}` +
        (who ? `\nheld by ${who}` : "");
      const bar = el("div", { class: "tile-bar" });
      const m = g.bucket_milli ?? {};
      for (const b of BUCKETS) {
        if ((m[b] ?? 0) <= 0) continue;
        const seg = el("span", { class: `seg ${b}` });
        seg.style.flexGrow = String(m[b]);
        bar.appendChild(seg);
      }
      return el(
        "button",
        {
          class: `tile ${bucket}${g.uuid === this.selected ? " selected" : ""}`,
          title,
          type: "button",
          "data-uuid": g.uuid,
          "data-index": g.index,
          "data-bucket": bucket,
        },
        el("span", { class: "tile-index" }, String(g.index)),
        el("span", { class: "tile-util" }, known ? percent(util) : "-"),
        el("span", { class: "tile-bucket" }, bucket.replace(/_/g, " ")),
        bar,
      );
    });
    const shown = [...BUCKETS, "unscheduled"].filter((b) => counts.has(b));
    const legend = el(
      "div",
      { class: "legend", "data-testid": "gpu-legend" },
      ...shown.map((b) =>
        el(
          "span",
          { class: "legend-item", "data-bucket": b, title: b === "unscheduled" ? "a GPU airtime does not schedule" : BUCKET_HELP[b as BucketName] },
          el("span", { class: `swatch ${b}` }),
          `${b}: ${counts.get(b)}`,
        ),
      ),
    );
    const free = gpus.filter((g) => g.allocations.length === 0).length;
    replace(
      this.root.querySelector(".gpu-summary")!,
      el("span", { "data-testid": "gpu-count" }, String(gpus.length)),
      ` GPUs; ${gpus.length - free} held by work, ${free} free. Each tile has the colour of the ledger bucket that holds most of the GPU now, and a bar of its split; the GPUs per bucket:`,
    );
    replace(this.root.querySelector(".gpu-legend")!, legend);
    replace(this.root.querySelector(".gpu-map")!, ...tiles);
    replace(this.root.querySelector(".ledger-now")!, nowBar(nowSplit));
    this.renderDetail();
  }

  renderHistory(history: GpuHistory | null) {
    this.lastHistory = history;
    const box = this.root.querySelector(".history-cluster")!;
    for (const c of this.charts) c.destroy();
    this.charts = [];
    if (!history) {
      replace(box, el("p", { class: "note" }, "This daemon keeps no utilization history (GET /v1/gpus/history)."));
      return;
    }
    replace(box);
    this.charts.push(chart(box as HTMLElement, "All GPUs: allocated and measured busy (mean)", history, history.cluster));
    this.renderDetail();
  }

  private renderDetail() {
    const box = this.root.querySelector(".gpu-detail") as HTMLElement;
    const g = this.lastGpus.find((x) => x.uuid === this.selected);
    if (!g) {
      replace(box, el("p", { class: "note" }, "Pick a GPU on the map for its holders and its last day."));
      return;
    }
    const rows = g.allocations.map((a) =>
      el(
        "tr",
        {},
        el("td", { class: "num" }, String(a.workload)),
        el("td", {}, a.name),
        el("td", {}, a.tenant),
        el("td", { class: "num" }, (a.milli / 1000).toFixed(3)),
        el("td", { class: "num" }, a.run === null ? "-" : String(a.run)),
      ),
    );
    const hist = this.lastHistory?.gpus.find((x) => x.uuid === g.uuid);
    const chartBox = el("div", { class: "history-gpu" });
    replace(
      box,
      el("h3", {}, `GPU ${g.index}: `, g.model, ` (${g.uuid})`),
      el("p", { "data-testid": "gpu-detail-bucket" }, g.bucket ? `The ledger counts it now as ${bucketText(g)} (GPUs).` : "airtime does not schedule it."),
      el(
        "p",
        {},
        `utilization ${percent(g.utilization ?? null)}, memory ${g.memory_used_mib ?? "-"} / ${g.memory_mib} MiB` +
          (g.power_w ? `, ${g.power_w.toFixed(0)} W` : "") +
          (g.scheduled ? "" : "; not scheduled (a type airtime does not know)"),
      ),
      rows.length
        ? el(
            "table",
            { class: "grid" },
            el("thead", {}, el("tr", {}, ...["id", "workload", "tenant", "GPUs", "run"].map((h) => el("th", {}, h)))),
            el("tbody", {}, ...rows),
          )
        : el("p", { class: "note" }, "No workload holds it."),
      chartBox,
    );
    if (hist && this.lastHistory) {
      this.charts.push(chart(chartBox, `GPU ${g.index}: allocated and measured busy`, this.lastHistory, hist));
    }
  }
}

// The cluster's split over the last refresh interval: the difference of two ledger reads.
function nowBar(split: { prev: LedgerSnapshot; cur: Ledger } | null): Node {
  if (!split) return el("p", { class: "note" }, "The ledger's split of the last interval shows after the second refresh.");
  const w = ledgerWindow(split.cur, split.prev, split.prev.now);
  const seconds = (w.to - w.from) / 1000;
  if (w.installed <= 0 || seconds <= 0) return el("p", { class: "note" }, "No installed time counted since the last refresh.");
  const gpus = w.installed / seconds;
  const bar = el("div", { class: "stack", "data-testid": "ledger-now" });
  const legend = el("div", { class: "legend" });
  for (const b of BUCKETS) {
    const v = w.buckets[b];
    if (v <= 0) continue;
    const seg = el("span", { class: `seg ${b}`, title: `${b}: ${(v / seconds).toFixed(2)} GPUs` });
    seg.style.flexGrow = String(v);
    bar.appendChild(seg);
    legend.appendChild(
      el("span", { class: "legend-item" }, el("span", { class: `swatch ${b}` }), `${b} ${(v / seconds).toFixed(2)}`),
    );
  }
  return el(
    "div",
    {},
    el("p", {}, `Ledger over the last ${seconds.toFixed(0)} s: ${gpus.toFixed(1)} GPUs installed, in GPUs per bucket`),
    bar,
    legend,
  );
}

// The series from its first sample on (a daemon keeps a day from its start); with few
// samples each is drawn as a point too, since a line needs two.
function chart(box: HTMLElement, title: string, h: GpuHistory, s: HistorySeries): uPlot {
  let first = s.allocated.findIndex((v, i) => v !== null || s.utilization[i] !== null);
  if (first < 0) first = Math.max(0, s.allocated.length - 1);
  const xs: number[] = [];
  for (let i = first; i < s.allocated.length; i++) xs.push(h.start / 1000 + i * h.step_s);
  const few = xs.length < 120;
  const width = Math.max(300, Math.min(1100, box.clientWidth || 900));
  return new uPlot(
    {
      title,
      width,
      height: 200,
      // From the first sample to now; at least 10 minutes wide, so that a young daemon's
      // few slots are not stretched over an axis of years.
      scales: {
        x: { time: true, range: [xs[0], Math.max(h.now / 1000, xs[0] + 600)] },
        y: { range: [0, 1] },
      },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${Math.round(t * 100)}%`) }],
      series: [
        {},
        { label: "allocated", stroke: "#3465a4", width: 1.5, fill: "rgba(52,101,164,0.12)", points: { show: few } },
        { label: "measured busy", stroke: "#c4590f", width: 1.5, points: { show: few } },
      ],
    },
    [xs, s.allocated.slice(first), s.utilization.slice(first)] as uPlot.AlignedData,
    box,
  );
}

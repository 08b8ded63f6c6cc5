// The GPU map: one tile per GPU, coloured by what the daemon knows of it now (its
// allocations and measured utilization), and the allocation against measured utilization
// over the last day (GET /v1/gpus/history), for the cluster and for the GPU picked on the map.
import uPlot from "uplot";
import type { Gpu, GpuHistory, HistorySeries, Ledger } from "../api";
import { el, replace } from "../dom";
import { BUCKETS, percent, splitGpu, type LedgerSnapshot, ledgerWindow } from "../format";

const STATE_TEXT = {
  useful: "held, mostly computing",
  idle_held: "held, mostly idle",
  held_unknown: "held, utilization not measured",
  free: "free",
} as const;

export class GpuView {
  private selected: string | null = null;
  private charts: uPlot[] = [];
  private lastGpus: Gpu[] = [];
  private lastHistory: GpuHistory | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly onSelect: (uuid: string) => void,
  ) {}

  selectedUuid(): string | null {
    return this.selected;
  }

  render(gpus: Gpu[], nowSplit: { prev: LedgerSnapshot; cur: Ledger } | null) {
    this.lastGpus = gpus;
    const counts = { useful: 0, idle_held: 0, held_unknown: 0, free: 0 };
    const tiles = gpus.map((g) => {
      const milli = g.allocations.reduce((s, a) => s + a.milli, 0);
      const split = splitGpu(milli, g.utilization);
      counts[split.state]++;
      const who = g.allocations.map((a) => `${a.name} (${a.tenant}) ${a.milli / 1000}`).join(", ");
      const title =
        `GPU ${g.index} ${g.type || g.model} ${g.uuid}\n` +
        `${STATE_TEXT[split.state]}; utilization ${split.known ? percent(g.utilization ?? null) : "unknown"}` +
        (who ? `\nheld by ${who}` : "");
      const bar = el(
        "div",
        { class: "tile-bar" },
        el("span", { class: "seg useful", "data-w": split.busy }),
        el("span", { class: "seg idle_held", "data-w": split.idle }),
        el("span", { class: "seg free", "data-w": split.free }),
      );
      for (const seg of bar.children) (seg as HTMLElement).style.flexGrow = (seg as HTMLElement).dataset.w ?? "0";
      const tile = el(
        "button",
        {
          class: `tile ${split.state}${g.uuid === this.selected ? " selected" : ""}${g.scheduled ? "" : " unscheduled"}`,
          title,
          type: "button",
          "data-uuid": g.uuid,
          "data-state": split.state,
        },
        el("span", { class: "tile-index" }, String(g.index)),
        el("span", { class: "tile-type" }, g.type || "?"),
        el("span", { class: "tile-util" }, split.known ? percent(g.utilization ?? null) : "-"),
        bar,
      );
      tile.addEventListener("click", () => {
        this.selected = g.uuid;
        this.onSelect(g.uuid);
        this.renderDetail();
        for (const t of this.root.querySelectorAll(".tile.selected")) t.classList.remove("selected");
        tile.classList.add("selected");
      });
      return tile;
    });
    const legend = el(
      "div",
      { class: "legend" },
      ...(["useful", "idle_held", "held_unknown", "free"] as const).map((s) =>
        el("span", { class: "legend-item" }, el("span", { class: `swatch ${s}` }), `${STATE_TEXT[s]}: ${counts[s]}`),
      ),
    );
    replace(
      this.root.querySelector(".gpu-summary")!,
      el("span", { "data-testid": "gpu-count" }, String(gpus.length)),
      ` GPUs; ${gpus.length - counts.free} held by work, ${counts.free} free`,
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

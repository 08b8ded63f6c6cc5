// The ledger of a window as a waterfall (installed GPU-hours down through each bucket to
// zero) and a 100% stacked bar, with the value earned and the return per installed GPU-hour.
// GET /v1/ledger is cumulative since the ledger began; the shorter windows are differences
// of the reads this page made.
import type { Ledger } from "../api";
import { el, replace, svg } from "../dom";
import {
  BUCKET_HELP,
  BUCKETS,
  fixed,
  gpuHours,
  type LedgerSnapshot,
  type LedgerWindow,
  ledgerWindow,
  percent,
  returnPerGpuHour,
  utc,
  waterfall,
} from "../format";

export type WindowChoice = "all" | "page" | "5m";

export class LedgerView {
  private choice: WindowChoice = "all";
  private reads: LedgerSnapshot[] = []; // this page's reads, oldest first (the last hour)
  private last: Ledger | null = null;

  constructor(private readonly root: HTMLElement) {
    const select = root.querySelector("select.window") as HTMLSelectElement;
    select.addEventListener("change", () => {
      this.choice = select.value as WindowChoice;
      if (this.last) this.draw(this.last);
    });
  }

  // The read before the latest, for the map's "now" split.
  previous(): LedgerSnapshot | null {
    return this.reads.length >= 2 ? this.reads[this.reads.length - 2] : null;
  }

  render(ledger: Ledger) {
    this.last = ledger;
    this.reads.push(ledger);
    while (this.reads.length > 2 && ledger.now - this.reads[1].now > 3600_000) this.reads.shift();
    this.draw(ledger);
  }

  private base(ledger: Ledger): LedgerSnapshot | null {
    if (this.choice === "all") return null;
    if (this.choice === "page") return this.reads[0] === ledger ? null : this.reads[0];
    const cut = ledger.now - 5 * 60_000;
    // The newest read at least 5 minutes old, else the oldest (the window then says so).
    let best = this.reads[0];
    for (const r of this.reads) if (r.now <= cut) best = r;
    return best === ledger ? null : best;
  }

  private draw(ledger: Ledger) {
    const from = this.base(ledger);
    const w = ledgerWindow(ledger, from, ledger.since);
    // The whole ledger's return is the daemon's own figure; a window's is computed here.
    const ret = from === null ? ledger.return_per_gpu_hour : w.returnPerGpuHour;
    replace(
      this.root.querySelector(".ledger-figures")!,
      figure("return per installed GPU-hour", returnPerGpuHour(ret), "ledger-return"),
      figure("value earned", fixed(w.value, 3), "ledger-value"),
      figure("installed GPU-hours", gpuHours(w.installed), "ledger-installed"),
      figure("window", `${utc(w.from)} to ${utc(w.to)}`, "ledger-window"),
    );
    const note =
      ledger.unobserved_seconds > 0 && from === null
        ? `${fixed(ledger.unobserved_seconds, 0)} s while no daemon ran are in no bucket.`
        : "";
    replace(this.root.querySelector(".ledger-note")!, note);
    replace(this.root.querySelector(".ledger-chart")!, waterfallSvg(w));
    replace(this.root.querySelector(".ledger-table")!, table(w));
  }
}

function figure(label: string, value: string, testid: string): HTMLElement {
  return el("div", { class: "figure" }, el("div", { class: "figure-value", "data-testid": testid }, value), el("div", { class: "figure-label" }, label));
}

function waterfallSvg(w: LedgerWindow): SVGElement {
  const steps = waterfall(w);
  const width = 900;
  const height = 280;
  const left = 60;
  const bottom = 60;
  const top = 10;
  const plotH = height - bottom - top;
  const barW = (width - left - 10) / steps.length;
  const max = Math.max(w.installed, 1e-9);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "waterfall",
    role: "img",
    "aria-label": "ledger waterfall",
  });
  // Axis: GPU-hours at 0, half, full.
  for (const f of [0, 0.5, 1]) {
    const v = max * f;
    root.appendChild(svg("line", { x1: left, x2: width - 10, y1: y(v), y2: y(v), class: "gridline" }));
    root.appendChild(svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, gpuHours(v)));
  }
  steps.forEach((s, i) => {
    const x = left + i * barW + barW * 0.15;
    const h = Math.max(y(s.bottom) - y(s.top), s.top > s.bottom ? 1 : 0);
    root.appendChild(
      svg(
        "rect",
        { x, y: y(s.top), width: barW * 0.7, height: h, class: `bar ${s.total ? "total" : s.label}` },
        svg("title", {}, `${s.label}: ${gpuHours(s.top - s.bottom)} GPU-hours`),
      ),
    );
    if (i + 1 < steps.length) {
      root.appendChild(svg("line", { x1: x + barW * 0.7, x2: x + barW, y1: y(s.bottom), y2: y(s.bottom), class: "connector" }));
    }
    root.appendChild(
      svg("text", { x: x + barW * 0.35, y: height - bottom + 14, "text-anchor": "middle", class: "axis" }, s.label.replace(/_/g, " ")),
    );
    const share = w.installed > 0 ? (s.top - s.bottom) / w.installed : 0;
    root.appendChild(svg("text", { x: x + barW * 0.35, y: height - bottom + 28, "text-anchor": "middle", class: "axis dim" }, percent(share, 1)));
  });
  return root;
}

function table(w: LedgerWindow): HTMLElement {
  return el(
    "table",
    { class: "grid" },
    el("thead", {}, el("tr", {}, el("th", {}, "bucket"), el("th", { class: "num" }, "GPU-hours"), el("th", { class: "num" }, "share"), el("th", {}, "meaning"))),
    el(
      "tbody",
      {},
      ...BUCKETS.map((b) =>
        el(
          "tr",
          { "data-bucket": b },
          el("td", {}, el("span", { class: `swatch ${b}` }), b),
          el("td", { class: "num" }, gpuHours(w.buckets[b])),
          el("td", { class: "num" }, w.installed > 0 ? percent(w.buckets[b] / w.installed, 1) : "-"),
          el("td", { class: "dim" }, BUCKET_HELP[b]),
        ),
      ),
    ),
  );
}

// The ledger of a window as two waterfalls: installed GPU-hours down through each bucket to
// zero, and the value earned down through each bucket's cost to the margin; the return per
// installed GPU-hour, and per GPU type its cost, value and break-even allocation.
// GET /v1/ledger is cumulative since the ledger began; the shorter windows are differences
// of the reads this page made.
import type { Ledger } from "../api";
import { el, replace, svg } from "../dom";
import {
  BUCKET_HELP,
  BUCKETS,
  type CostWindow,
  fixed,
  gpuHours,
  type LedgerSnapshot,
  type LedgerWindow,
  ledgerWindow,
  money,
  moneyWaterfall,
  percent,
  returnPerGpuHour,
  share,
  utc,
  type WaterfallStep,
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

  // Takes in a read of /v1/ledger (every read, shown or not: the windows are differences).
  add(ledger: Ledger) {
    this.last = ledger;
    this.reads.push(ledger);
    while (this.reads.length > 2 && ledger.now - this.reads[1].now > 3600_000) this.reads.shift();
  }

  // Draws the latest read.
  render() {
    if (this.last) this.draw(this.last);
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
    const c = w.costs;
    replace(
      this.root.querySelector(".ledger-figures")!,
      figure("return per installed GPU-hour", returnPerGpuHour(ret), "ledger-return"),
      figure("value earned", money(w.value), "ledger-value"),
      c && figure("cost of the installed GPUs", money(c.cost), "ledger-cost"),
      c && figure("margin (value - cost)", money(c.margin), "ledger-margin", c.margin < 0 ? "loss" : "gain"),
      c && figure("cost per installed GPU-hour", fixed(c.costPerInstalledGpuHour, 3), "ledger-cost-rate"),
      figure("installed GPU-hours", gpuHours(w.installed), "ledger-installed"),
      figure("window", `${utc(w.from)} to ${utc(w.to)}`, "ledger-window"),
    );
    const note =
      ledger.unobserved_seconds > 0 && from === null
        ? `${fixed(ledger.unobserved_seconds, 0)} s while no daemon ran are in no bucket.`
        : "";
    replace(this.root.querySelector(".ledger-note")!, note);
    replace(
      this.root.querySelector(".ledger-chart")!,
      waterfallSvg(waterfall(w), "ledger waterfall", gpuHours, (s) => `${s.label}: ${gpuHours(s.top - s.bottom)} GPU-hours`, (s) =>
        percent(w.installed > 0 ? Math.max(0, s.top - s.bottom) / w.installed : 0, 1),
      ),
    );
    replace(this.root.querySelector(".ledger-money")!, c ? moneyChart(c) : el("p", { class: "note" }, "This daemon reports no costs (GET /v1/ledger has no costs)."));
    replace(this.root.querySelector(".ledger-table")!, table(w));
    replace(this.root.querySelector(".ledger-types")!, c ? typesTable(c) : "");
  }
}

function figure(label: string, value: string, testid: string, tone = ""): HTMLElement {
  return el(
    "div",
    { class: "figure" },
    el("div", { class: `figure-value ${tone}`.trim(), "data-testid": testid }, value),
    el("div", { class: "figure-label" }, label),
  );
}

function moneyChart(c: CostWindow): Node {
  const steps = moneyWaterfall(c);
  return el(
    "div",
    {},
    el("h3", {}, "Value against what the GPUs cost: each bucket's cost taken off the value, down to the margin"),
    waterfallSvg(steps, "value and cost waterfall", money, (s) => `${s.label}: ${money(s.top - s.bottom)}${s.total ? "" : " of cost"}`, (s) =>
      s.total ? (s.label === "margin" && c.margin < 0 ? "loss" : "") : percent(c.cost > 0 ? (s.top - s.bottom) / c.cost : 0, 1) + " of cost",
    ),
  );
}

// A waterfall of `steps` (bars spanning [bottom, top]), with a zero line when some go below.
function waterfallSvg(
  steps: WaterfallStep[],
  label: string,
  axis: (v: number) => string,
  title: (s: WaterfallStep) => string,
  note: (s: WaterfallStep) => string,
): SVGElement {
  const width = 900;
  const height = 280;
  const left = 60;
  const bottom = 60;
  const top = 10;
  const plotH = height - bottom - top;
  const barW = (width - left - 10) / steps.length;
  const lo = Math.min(0, ...steps.map((s) => s.bottom));
  const hi = Math.max(...steps.map((s) => s.top), lo + 1e-9);
  const y = (v: number) => top + plotH - ((v - lo) / (hi - lo)) * plotH;
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "waterfall",
    role: "img",
    "aria-label": label,
  });
  const ticks = lo < 0 ? [lo, 0, hi] : [0, hi / 2, hi];
  for (const v of ticks) {
    root.appendChild(svg("line", { x1: left, x2: width - 10, y1: y(v), y2: y(v), class: v === 0 ? "gridline zero" : "gridline" }));
    root.appendChild(svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, axis(v)));
  }
  steps.forEach((s, i) => {
    const x = left + i * barW + barW * 0.15;
    const h = Math.max(y(s.bottom) - y(s.top), s.top > s.bottom ? 1 : 0);
    const kind = s.total ? `total ${s.label}${s.label === "margin" && s.bottom < 0 ? " loss" : ""}` : s.label;
    root.appendChild(svg("rect", { x, y: y(s.top), width: barW * 0.7, height: h, class: `bar ${kind}`, "data-step": s.label }, svg("title", {}, title(s))));
    if (i + 1 < steps.length && !steps[i + 1].total) {
      root.appendChild(svg("line", { x1: x + barW * 0.7, x2: x + barW, y1: y(s.bottom), y2: y(s.bottom), class: "connector" }));
    }
    root.appendChild(
      svg("text", { x: x + barW * 0.35, y: height - bottom + 14, "text-anchor": "middle", class: "axis" }, s.label.replace(/_/g, " ")),
    );
    root.appendChild(svg("text", { x: x + barW * 0.35, y: height - bottom + 28, "text-anchor": "middle", class: "axis dim" }, note(s)));
  });
  return root;
}

function table(w: LedgerWindow): HTMLElement {
  const c = w.costs;
  return el(
    "table",
    { class: "grid" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", {}, "bucket"),
        el("th", { class: "num" }, "GPU-hours"),
        el("th", { class: "num" }, "share"),
        c && el("th", { class: "num" }, "cost"),
        el("th", {}, "meaning"),
      ),
    ),
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
          c && el("td", { class: "num", "data-testid": `cost-${b}` }, money(c.buckets[b])),
          el("td", { class: "dim" }, BUCKET_HELP[b]),
        ),
      ),
    ),
  );
}

// Per GPU type: its hourly rate, hours, cost, value, margin and break-even allocation.
function typesTable(c: CostWindow): HTMLElement {
  const head = ["GPU type", "rate / GPU-hour", "installed GPU-hours", "allocation", "cost", "value", "margin", "break-even allocation"];
  return el(
    "div",
    {},
    el("h3", {}, "Per GPU type: the allocation at which it pays for itself"),
    el(
      "table",
      { class: "grid", "data-testid": "ledger-types" },
      el("thead", {}, el("tr", {}, ...head.map((h, i) => el("th", { class: i === 0 ? undefined : "num" }, h)))),
      el(
        "tbody",
        {},
        ...c.types.map((t) =>
          el(
            "tr",
            { "data-type": t.type },
            el("td", {}, t.type),
            el("td", { class: "num" }, fixed(t.perHour, 3)),
            el("td", { class: "num" }, gpuHours(t.installedHours * 3600)),
            el("td", { class: "num" }, share(t.allocation)),
            el("td", { class: "num" }, money(t.cost)),
            el("td", { class: "num" }, money(t.value)),
            el("td", { class: "num" }, money(t.margin)),
            el(
              "td",
              { class: "num", "data-testid": "breakeven", title: t.breakeven === null ? "no value earned on this type in the window" : "" },
              t.breakeven === null ? "none" : share(t.breakeven),
            ),
          ),
        ),
      ),
    ),
    el(
      "p",
      { class: "dim" },
      "Break-even allocation: the share of a type's installed hours that must be held by work for its value to cover its cost, at the value it earned per allocated GPU-hour in this window (above 100%: it cannot pay for itself at that value). Every installed hour costs the same, busy or idle (docs/costs.md).",
    ),
  );
}

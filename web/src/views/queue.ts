// The queue: the caller's active workloads (queued and running), a page at a time from
// GET /v1/workloads?state=active&limit=&offset=, newest first, each with its one-line reason;
// a row opens the engine's full explanation and runs (GET /v1/workloads/{id}).
import type { Workload, WorkloadList } from "../api";
import { el, replace } from "../dom";
import { duration, utc } from "../format";
import { PAGE_SIZE } from "../reads";

export class QueueView {
  offset = 0;
  private open = new Set<number>();
  private explanations = new Map<number, Workload | string>();

  constructor(
    private readonly root: HTMLElement,
    private readonly loadDetail: (id: number) => Promise<Workload>,
    private readonly onPage: () => void,
  ) {
    root.querySelector(".page-prev")!.addEventListener("click", () => {
      this.offset = Math.max(0, this.offset - PAGE_SIZE);
      this.onPage();
    });
    root.querySelector(".page-next")!.addEventListener("click", () => {
      this.offset += PAGE_SIZE;
      this.onPage();
    });
  }

  render(list: WorkloadList, now: number) {
    const rows = [...list.workloads].reverse(); // newest first
    const total = list.total ?? list.workloads.length;
    const queued = list.workloads.filter((w) => w.state === "queued").length;
    replace(
      this.root.querySelector(".queue-summary")!,
      el("span", { "data-testid": "active-count" }, String(total)),
      " active workloads; on this page ",
      el("span", { "data-testid": "queued-on-page" }, String(queued)),
      " queued and ",
      String(list.workloads.length - queued),
      " running",
      total > list.workloads.length ? ` (rows ${this.offset + 1}-${this.offset + list.workloads.length}, newest first)` : "",
    );
    (this.root.querySelector(".page-prev") as HTMLButtonElement).disabled = this.offset === 0;
    (this.root.querySelector(".page-next") as HTMLButtonElement).disabled = this.offset + list.workloads.length >= total;
    const body = el("tbody", {});
    for (const w of rows) {
      const since = w.state === "queued" ? w.submitted_at : (w.started_at ?? w.submitted_at);
      const gpus = w.replicas ? `${w.gpus.length} r${w.replicas.running}/${w.replicas.target}` : String(w.gpus.length);
      const row = el(
        "tr",
        { class: `workload ${w.state}`, "data-id": w.id, tabindex: 0 },
        el("td", { class: "num" }, String(w.id)),
        el("td", { class: "name" }, w.name),
        el("td", {}, w.tenant),
        el("td", {}, w.kind),
        el("td", { class: `state ${w.state}` }, w.state),
        el("td", { class: "num" }, String(w.priority)),
        el("td", { class: "num" }, gpus),
        el("td", { class: "num" }, duration(now - since)),
        el("td", { class: "reason" }, w.reason),
      );
      const toggle = () => {
        if (this.open.has(w.id)) this.open.delete(w.id);
        else this.open.add(w.id);
        this.renderDetail(w.id, row);
      };
      row.addEventListener("click", toggle);
      row.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          toggle();
        }
      });
      body.appendChild(row);
      if (this.open.has(w.id)) body.appendChild(this.detailRow(w.id));
    }
    replace(this.root.querySelector("table.queue")!, this.head(), body);
  }

  private head(): HTMLElement {
    return el(
      "thead",
      {},
      el("tr", {}, ...["id", "name", "tenant", "kind", "state", "prio", "GPUs", "age/wait", "reason"].map((h) => el("th", {}, h))),
    );
  }

  private renderDetail(id: number, row: HTMLElement) {
    const next = row.nextElementSibling;
    if (next?.classList.contains("detail")) next.remove();
    if (!this.open.has(id)) return;
    row.after(this.detailRow(id));
    this.loadDetail(id)
      .then((w) => this.explanations.set(id, w))
      .catch((e) => this.explanations.set(id, String(e instanceof Error ? e.message : e)))
      .finally(() => {
        const d = row.nextElementSibling;
        if (d?.classList.contains("detail")) d.replaceWith(this.detailRow(id));
      });
  }

  private detailRow(id: number): HTMLElement {
    const got = this.explanations.get(id);
    let content: Node;
    if (got === undefined) content = el("p", { class: "note" }, "loading...");
    else if (typeof got === "string") content = el("p", { class: "error" }, got);
    else content = detail(got);
    return el("tr", { class: "detail", "data-detail-for": id }, el("td", { colspan: 9 }, content));
  }
}

function detail(w: Workload): HTMLElement {
  const runs = (w as Workload & { runs?: { id: number; replica: number; attempt: number; state: string; gpus: string[]; started_at: number; ended_at: number | null; stop_reason: string }[] }).runs ?? [];
  return el(
    "div",
    { class: "explanation-box" },
    el("h4", {}, "Explanation"),
    el("pre", { class: "explanation", "data-testid": "explanation" }, w.explanation ?? ""),
    el("p", { class: "dim" }, `submitted ${utc(w.submitted_at)}; started ${utc(w.started_at)}; preemptions ${w.preemptions}`),
    runs.length
      ? el(
          "table",
          { class: "grid" },
          el("thead", {}, el("tr", {}, ...["run", "replica", "attempt", "state", "GPUs", "started", "ended", "stop reason"].map((h) => el("th", {}, h)))),
          el(
            "tbody",
            {},
            ...runs.map((r) =>
              el(
                "tr",
                {},
                el("td", { class: "num" }, String(r.id)),
                el("td", { class: "num" }, String(r.replica)),
                el("td", { class: "num" }, String(r.attempt)),
                el("td", {}, r.state),
                el("td", {}, r.gpus.join(", ")),
                el("td", {}, utc(r.started_at)),
                el("td", {}, utc(r.ended_at)),
                el("td", {}, r.stop_reason),
              ),
            ),
          ),
        )
      : el("p", { class: "note" }, "No run yet."),
  );
}

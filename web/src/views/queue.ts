// The queue: the caller's active workloads (queued and running), a page at a time from
// GET /v1/workloads?state=active&limit=&offset=, newest first, each with its one-line reason;
// a row opens the engine's full explanation and runs (GET /v1/workloads/{id}). A service with
// model variants is one group: its row (the members' replicas and GPUs summed, and its mix:
// which variants serve each class) with its members' rows under it, in variant order; the
// service's row opens the service's view (GET /v1/workloads/{service}).
import type { Workload, WorkloadList } from "../api";
import { el, replace } from "../dom";
import { duration, utc } from "../format";
import { PAGE_SIZE } from "../reads";

// A row's detail is read by this path segment: a workload's id, or a service's name.
type DetailKey = string;

export class QueueView {
  offset = 0;
  private open = new Set<DetailKey>();
  private explanations = new Map<DetailKey, Workload | string>();

  constructor(
    private readonly root: HTMLElement,
    private readonly loadDetail: (key: DetailKey) => Promise<Workload>,
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
    const add = (row: HTMLElement, key: DetailKey) => {
      this.clickable(row, key);
      body.appendChild(row);
      if (this.open.has(key)) body.appendChild(this.detailRow(key));
    };
    const groups = serviceGroups(rows);
    const drawn = new Set<string>();
    for (const w of rows) {
      if (w.service === undefined) {
        add(workloadRow(w, now, ""), String(w.id));
        continue;
      }
      // A service's group goes where its newest member would.
      if (drawn.has(w.service)) continue;
      drawn.add(w.service);
      const members = groups.get(w.service)!;
      add(serviceRow(w.service, members, now), serviceKey(w.service));
      for (const m of members) add(workloadRow(m, now, w.service), String(m.id));
    }
    replace(this.root.querySelector("table.queue")!, this.head(), body);
  }

  private clickable(row: HTMLElement, key: DetailKey) {
    const toggle = () => {
      if (this.open.has(key)) this.open.delete(key);
      else this.open.add(key);
      this.renderDetail(key, row);
    };
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        toggle();
      }
    });
  }

  private head(): HTMLElement {
    return el(
      "thead",
      {},
      el("tr", {}, ...["id", "name", "tenant", "kind", "state", "prio", "GPUs", "age/wait", "reason"].map((h) => el("th", {}, h))),
    );
  }

  private renderDetail(key: DetailKey, row: HTMLElement) {
    const next = row.nextElementSibling;
    if (next?.classList.contains("detail")) next.remove();
    if (!this.open.has(key)) return;
    row.after(this.detailRow(key));
    this.loadDetail(key)
      .then((w) => this.explanations.set(key, w))
      .catch((e) => this.explanations.set(key, String(e instanceof Error ? e.message : e)))
      .finally(() => {
        const d = row.nextElementSibling;
        if (d?.classList.contains("detail")) d.replaceWith(this.detailRow(key));
      });
  }

  private detailRow(key: DetailKey): HTMLElement {
    const got = this.explanations.get(key);
    let content: Node;
    if (got === undefined) content = el("p", { class: "note" }, "loading...");
    else if (typeof got === "string") content = el("p", { class: "error" }, got);
    else content = detail(got);
    return el("tr", { class: "detail", "data-detail-for": key }, el("td", { colspan: 9 }, content));
  }
}

// A workload's detail is read by its id; a service has none, so by its name.
export function serviceKey(service: string): DetailKey {
  return `service:${service}`;
}

// The path segment of GET /v1/workloads/{id-or-name} for a detail key.
export function detailPath(key: DetailKey): string {
  return key.startsWith("service:") ? encodeURIComponent(key.slice("service:".length)) : key;
}

// The members on this page of each service with variants, in variant order (members are
// submitted together, in that order, so their ids rise with it).
export function serviceGroups(rows: Workload[]): Map<string, Workload[]> {
  const groups = new Map<string, Workload[]>();
  for (const w of rows) if (w.service !== undefined) groups.set(w.service, [...(groups.get(w.service) ?? []), w]);
  for (const members of groups.values()) members.sort((a, b) => a.id - b.id);
  return groups;
}

// What a service's row sums up from its members: as GET /v1/workloads/{service} does.
export interface ServiceSummary {
  state: string;
  gpus: number;
  running: number;
  target: number;
  since: number;
  mix: string;
}

export function summarize(members: Workload[]): ServiceSummary {
  let running = 0;
  let target = 0;
  let gpus = 0;
  let since = Infinity;
  for (const m of members) {
    running += m.replicas?.running ?? 0;
    target += m.replicas?.target ?? 0;
    gpus += m.gpus.length;
    since = Math.min(since, m.state === "queued" ? m.submitted_at : (m.started_at ?? m.submitted_at));
  }
  const state = members.some((m) => m.state === "running") ? "running" : "queued";
  const mix = members.find((m) => m.mix)?.mix ?? "";
  return { state, gpus, running, target, since, mix };
}

function serviceRow(service: string, members: Workload[], now: number): HTMLElement {
  const s = summarize(members);
  const first = members[0]!;
  return el(
    "tr",
    { class: `service ${s.state}`, "data-service": service, tabindex: 0 },
    el("td", { class: "num" }, "-"),
    el("td", { class: "name" }, service),
    el("td", {}, first.tenant),
    el("td", {}, first.kind),
    el("td", { class: `state ${s.state}` }, s.state),
    el("td", { class: "num" }, String(first.priority)),
    el("td", { class: "num", "data-testid": "service-replicas" }, `${s.gpus} r${s.running}/${s.target}`),
    el("td", { class: "num" }, duration(now - s.since)),
    el(
      "td",
      { class: "reason" },
      `model variants: ${members.map((m) => m.variant ?? m.name).join(", ")}`,
      el("br", {}),
      "mix: ",
      el("span", { "data-testid": "service-mix" }, s.mix || "-"),
    ),
  );
}

function workloadRow(w: Workload, now: number, service: string): HTMLElement {
  const since = w.state === "queued" ? w.submitted_at : (w.started_at ?? w.submitted_at);
  const gpus = w.replicas ? `${w.gpus.length} r${w.replicas.running}/${w.replicas.target}` : String(w.gpus.length);
  return el(
    "tr",
    { class: `workload ${w.state}${service ? " member" : ""}`, "data-id": w.id, "data-service": service || undefined, tabindex: 0 },
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
}

function detail(w: Workload): HTMLElement {
  const runs = (w as Workload & { runs?: { id: number; workload?: string; replica: number; attempt: number; state: string; gpus: string[]; started_at: number; ended_at: number | null; stop_reason: string }[] }).runs ?? [];
  // A service's runs are its members': each says whose it is.
  const member = runs.some((r) => r.workload !== undefined);
  return el(
    "div",
    { class: "explanation-box" },
    w.mix ? el("p", { class: "mix" }, "mix: ", el("span", { "data-testid": "detail-mix" }, w.mix)) : null,
    el("h4", {}, "Explanation"),
    el("pre", { class: "explanation", "data-testid": "explanation" }, w.explanation ?? ""),
    el("p", { class: "dim" }, `submitted ${utc(w.submitted_at)}; started ${utc(w.started_at)}; preemptions ${w.preemptions}`),
    runs.length
      ? el(
          "table",
          { class: "grid" },
          el("thead", {}, el("tr", {}, ...[...(member ? ["member"] : []), "run", "replica", "attempt", "state", "GPUs", "started", "ended", "stop reason"].map((h) => el("th", {}, h)))),
          el(
            "tbody",
            {},
            ...runs.map((r) =>
              el(
                "tr",
                {},
                member ? el("td", {}, r.workload ?? "") : null,
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

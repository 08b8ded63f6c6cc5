// Tenants: GPUs allocated (and kept busy) per tenant, and under a policy with tenant quotas
// their deserved quota, fair share and borrowing, from /metrics (the airtime_tenant_*
// gauges and airtime_{allocated,utilized}_gpus). /metrics covers every tenant: it is the
// cluster's aggregate view, as the Grafana dashboard shows it.
import { el, replace } from "../dom";
import { fixed } from "../format";
import type { TenantRow } from "../prom";

export function renderTenants(root: HTMLElement, rows: TenantRow[], quotas: boolean, installed: number) {
  replace(
    root.querySelector(".tenants-summary")!,
    quotas
      ? "Deserved quotas, fair shares and borrowing come from the policy's tenant quotas."
      : "This daemon's policy sets no tenant quotas (--policy kai, or airtime:quota=...): allocation only.",
  );
  const scale = Math.max(installed, ...rows.map((r) => Math.max(r.allocated, r.deserved ?? 0, r.fairShare ?? 0)), 1);
  const bar = (r: TenantRow) => {
    const box = el("div", { class: "tenant-bar", title: `${r.tenant}: ${fixed(r.allocated, 2)} GPUs allocated` });
    const alloc = el("span", { class: "seg useful" });
    alloc.style.width = `${(100 * r.allocated) / scale}%`;
    box.appendChild(alloc);
    if (r.deserved !== null) {
      const mark = el("span", { class: "quota-mark", title: `deserved ${fixed(r.deserved, 2)}` });
      mark.style.left = `${(100 * r.deserved) / scale}%`;
      box.appendChild(mark);
    }
    return box;
  };
  replace(
    root.querySelector("table.tenants")!,
    el(
      "thead",
      {},
      el("tr", {}, ...["tenant", "allocated GPUs", "busy GPUs", "deserved", "fair share", "borrowed", ""].map((h) => el("th", {}, h))),
    ),
    el(
      "tbody",
      {},
      ...rows.map((r) =>
        el(
          "tr",
          { "data-tenant": r.tenant },
          el("td", {}, r.tenant),
          el("td", { class: "num" }, fixed(r.allocated, 2)),
          el("td", { class: "num" }, fixed(r.utilized, 2)),
          el("td", { class: "num" }, fixed(r.deserved, 2)),
          el("td", { class: "num" }, fixed(r.fairShare, 2)),
          el("td", { class: "num" }, fixed(r.borrowed, 2)),
          el("td", { class: "bar-cell" }, bar(r)),
        ),
      ),
    ),
  );
  if (rows.length === 0) root.querySelector("table.tenants tbody")!.appendChild(el("tr", {}, el("td", { colspan: 7, class: "note" }, "No tenant holds or waits for a GPU.")));
}

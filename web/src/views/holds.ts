// The 3 a.m. decisions log (GET /v1/holds): per service, its holds and hand-offs scored
// against the demand that came; then each call, newest first, with its reason in full.
import type { Holds } from "../api";
import { el, replace } from "../dom";
import { fixed, utc } from "../format";

export function renderHolds(root: HTMLElement, holds: Holds) {
  const services = Object.entries(holds.services).sort(([a], [b]) => a.localeCompare(b));
  replace(
    root.querySelector(".holds-summary")!,
    el("span", { "data-testid": "holds-kept" }, String(holds.decisions_kept)),
    ` calls kept for ${services.length} service(s); the newest ${holds.decisions.length} below, newest first. `,
    "A hold keeps a service's headroom for a forecast burst; a hand-off gives it to waiting work.",
  );
  replace(
    root.querySelector("table.holds-services")!,
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ...["service", "holds", "burst came", "hand-offs", "burst came", "held GPU-h", "value protected", "value forgone", "regret", "holds paid"].map((h) =>
          el("th", {}, h),
        ),
      ),
    ),
    el(
      "tbody",
      {},
      ...services.map(([name, s]) =>
        el(
          "tr",
          {},
          el("td", {}, name),
          el("td", { class: "num" }, String(s.holds)),
          el("td", { class: "num" }, String(s.holds_burst_came)),
          el("td", { class: "num" }, String(s.handoffs)),
          el("td", { class: "num" }, String(s.handoffs_burst_came)),
          el("td", { class: "num" }, fixed(s.held_gpu_hours, 4)),
          el("td", { class: "num" }, fixed(s.value_protected, 3)),
          el("td", { class: "num" }, fixed(s.value_forgone, 3)),
          el("td", { class: "num" }, fixed(s.regret, 3)),
          el("td", {}, s.holds_paid ? "yes" : "no"),
        ),
      ),
    ),
  );
  const calls = [...holds.decisions].reverse();
  replace(
    root.querySelector("table.holds-calls")!,
    el(
      "thead",
      {},
      el("tr", {}, ...["time", "service", "choice", "needed/held", "demand/forecast rps", "hold/hand-off value", "burst came", "regret", "why"].map((h) => el("th", {}, h))),
    ),
    el(
      "tbody",
      {},
      ...calls.map((c) =>
        el(
          "tr",
          { class: `call ${c.choice}` },
          el("td", {}, utc(c.t_s * 1000)),
          el("td", {}, c.service),
          el("td", {}, c.choice + (c.until_s === null ? " (standing)" : "")),
          el("td", { class: "num" }, `${c.replicas_needed}/${c.replicas_held}`),
          el("td", { class: "num" }, `${fixed(c.demand_rps, 1)}/${fixed(c.forecast_rps, 1)}`),
          el("td", { class: "num" }, `${fixed(c.hold_value, 3)}/${fixed(c.handoff_value, 3)}`),
          el("td", {}, c.burst_came ? "yes" : "no"),
          el("td", { class: "num" }, fixed(c.regret, 3)),
          el("td", { class: "reason" }, c.why),
        ),
      ),
    ),
  );
}

import { describe, expect, it } from "vitest";
import { parseProm, tenantsFromMetrics } from "./prom";

const TEXT = `# HELP airtime_tenant_allocated_gpus GPUs
# TYPE airtime_tenant_allocated_gpus gauge
airtime_tenant_allocated_gpus{tenant="team-a"} 6
airtime_tenant_allocated_gpus{tenant="te\\"am<b>"} 0
airtime_tenant_deserved_gpus{tenant="team-a"} 4
airtime_tenant_borrowed_gpus{tenant="team-a"} 2
airtime_utilized_gpus{tenant="team-a",kind="training"} 1.5
airtime_utilized_gpus{tenant="team-a",kind="batch"} 0.5
airtime_allocated_gpus{tenant="solo",kind="batch"} 1
airtime_gpus_installed 8
garbage line {
`;

describe("parseProm", () => {
  it("reads names, labels with escapes, and values", () => {
    const s = parseProm(TEXT);
    expect(s.find((x) => x.labels.tenant === 'te"am<b>')?.value).toBe(0);
    expect(s.find((x) => x.name === "airtime_gpus_installed")?.value).toBe(8);
    expect(s.some((x) => x.name === "garbage")).toBe(false);
  });
  it("sums tenants' series and falls back to per-kind allocation", () => {
    const { rows, quotas } = tenantsFromMetrics(parseProm(TEXT));
    expect(quotas).toBe(true);
    const a = rows.find((r) => r.tenant === "team-a")!;
    expect(a).toMatchObject({ allocated: 6, deserved: 4, borrowed: 2, utilized: 2 });
    expect(rows.find((r) => r.tenant === "solo")?.allocated).toBe(1);
    expect(rows[0].tenant).toBe("team-a");
  });
});

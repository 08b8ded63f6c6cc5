import { describe, expect, it } from "vitest";
import { costWindow, duration, ledgerWindow, money, moneyWaterfall, percent, returnPerGpuHour, share, waterfall } from "./format";

describe("ledger windows", () => {
  const a = { now: 0, installed_gpu_seconds: 3600, buckets: { useful: 1800, free_no_demand: 1800 }, value: 10 };
  const b = { now: 3600_000, installed_gpu_seconds: 3 * 3600, buckets: { useful: 1800 + 7200, free_no_demand: 1800 }, value: 40 };
  it("differences two reads, never below zero", () => {
    const w = ledgerWindow(b, a, 0);
    expect(w.installed).toBe(7200);
    expect(w.buckets.useful).toBe(7200);
    expect(w.buckets.free_no_demand).toBe(0);
    expect(w.value).toBe(30);
    expect(w.returnPerGpuHour).toBe(15);
  });
  it("makes a waterfall that ends at zero", () => {
    const steps = waterfall(ledgerWindow(b, null, 0));
    expect(steps[0]).toMatchObject({ label: "installed", bottom: 0, top: 10800, total: true });
    expect(steps[1]).toMatchObject({ label: "useful", bottom: 1800, top: 10800 });
    expect(steps.map((s) => s.label)).not.toContain("down"); // empty rare buckets are left out
    expect(steps[steps.length - 1].bottom).toBe(0);
  });
});

describe("cost windows", () => {
  const h100 = (cost: number, value: number, installed: number, allocated: number, breakeven: number | null) => ({
    type: "H100",
    per_hour: 2,
    installed_gpu_hours: installed,
    allocated_gpu_hours: allocated,
    cost,
    value,
    breakeven_allocation: breakeven,
  });
  const a = { cost: 4, value: 1, buckets: { useful: 1, free_no_demand: 3 }, types: [h100(4, 1, 2, 0.5, 2)] };
  const b = { cost: 12, value: 17, buckets: { useful: 6, free_no_demand: 6 }, types: [h100(12, 17, 6, 4.5, 0.529)] };
  it("keeps the daemon's own figures for the whole ledger", () => {
    const c = costWindow(b, null, 6 * 3600);
    expect(c).toMatchObject({ cost: 12, value: 17, margin: 5, costPerInstalledGpuHour: 2 });
    expect(c.types[0].breakeven).toBe(0.529);
  });
  it("differences two reads and prices the window's break-even", () => {
    const c = costWindow(b, a, 4 * 3600);
    expect(c).toMatchObject({ cost: 8, value: 16, margin: 8, costPerInstalledGpuHour: 2 });
    expect(c.buckets.useful).toBe(5);
    expect(c.buckets.free_no_demand).toBe(3);
    // 4 allocated hours earned 16: 4 per allocated hour; at 2 an hour it breaks even at 50%.
    expect(c.types[0]).toMatchObject({ installedHours: 4, allocatedHours: 4, allocation: 1, cost: 8, value: 16, margin: 8, breakeven: 0.5 });
  });
  it("has no break-even without value", () => {
    const c = costWindow({ ...b, value: 1, types: [h100(12, 1, 6, 4.5, 2)] }, a, 4 * 3600);
    expect(c.types[0].breakeven).toBeNull();
  });
  it("walks from the value through each bucket's cost to the margin, below zero for a loss", () => {
    const c = costWindow({ ...a, value: 1 }, null, 2 * 3600);
    const steps = moneyWaterfall(c);
    expect(steps[0]).toMatchObject({ label: "value", bottom: 0, top: 1, total: true });
    expect(steps[1]).toMatchObject({ label: "useful", bottom: 0, top: 1 });
    expect(steps[2]).toMatchObject({ label: "free_no_demand", bottom: -3, top: 0 });
    expect(steps[3]).toMatchObject({ label: "margin", bottom: -3, top: 0, total: true });
    expect(money(-3)).toBe("-3.00");
    expect(money(0.0016591)).toBe("0.00166");
    expect(money(0)).toBe("0.00");
    expect(share(0.529)).toBe("52.9%");
    expect(share(0.000012)).toBe("0.0012%");
    expect(share(null)).toBe("-");
  });
  it("carries costs through a ledger window", () => {
    const w = ledgerWindow(
      { now: 1, installed_gpu_seconds: 6 * 3600, buckets: {}, value: 17, costs: b },
      { now: 0, installed_gpu_seconds: 2 * 3600, buckets: {}, value: 1, costs: a },
      0,
    );
    expect(w.costs?.margin).toBe(8);
  });
});

describe("formatting", () => {
  it("formats", () => {
    expect(percent(0.537)).toBe("54%");
    expect(percent(null)).toBe("-");
    expect(returnPerGpuHour(1.23456)).toBe("1.235");
    expect(returnPerGpuHour(null)).toBe("-");
    expect(duration(42_000)).toBe("42s");
    expect(duration(3 * 3600_000 + 5 * 60_000)).toBe("3h05m");
  });
});

import { describe, expect, it } from "vitest";
import { duration, ledgerWindow, percent, returnPerGpuHour, splitGpu, waterfall } from "./format";

describe("splitGpu", () => {
  it("splits a held GPU by its measured busy fraction", () => {
    expect(splitGpu(1000, 0.25)).toMatchObject({ held: 1, busy: 0.25, idle: 0.75, free: 0, state: "idle_held" });
    expect(splitGpu(500, 0.9)).toMatchObject({ held: 0.5, busy: 0.5, idle: 0, free: 0.5, state: "useful" });
  });
  it("says free and unknown apart", () => {
    expect(splitGpu(0, 0.3).state).toBe("free");
    expect(splitGpu(1000, null)).toMatchObject({ known: false, busy: 0, idle: 1, state: "held_unknown" });
  });
});

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

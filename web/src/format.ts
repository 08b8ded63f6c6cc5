// Number, time and name formatting shared by the views (pure: unit-tested in format.test.ts).

export const BUCKETS = [
  "useful",
  "idle_held",
  "low_value_busy",
  "lost",
  "stranded",
  "reserved_headroom",
  "free_no_demand",
  "blocked",
  "down",
  "foreign",
] as const;
export type BucketName = (typeof BUCKETS)[number];

// What each ledger bucket means, one line (docs/report-format.md has the full rules).
export const BUCKET_HELP: Record<BucketName, string> = {
  useful: "held by running work that computes",
  idle_held: "held but not computing (cold start, unused share, interference)",
  low_value_busy: "computing work worth less than waiting work that could use it",
  lost: "work thrown away by preemption or failure",
  stranded: "free while waiting work fits nowhere (fragmentation)",
  reserved_headroom: "held or kept free on purpose for a forecast peak",
  free_no_demand: "free, and nothing waiting could use it",
  blocked: "free, a waiting workload would fit, but the policy keeps it waiting",
  down: "capacity of nodes that are down",
  foreign: "held by jobs airtime did not submit (Slurm)",
};

// Fixed number of decimals, "-" for null/NaN.
export function fixed(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "-";
  return x.toFixed(digits);
}

// 0.537 -> "54%"; null -> "-".
export function percent(ratio: number | null | undefined, digits = 0): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return "-";
  return `${(ratio * 100).toFixed(digits)}%`;
}

// GPU-seconds -> "12.35" GPU-hours.
export function gpuHours(gpuSeconds: number): string {
  return fixed(gpuSeconds / 3600, gpuSeconds < 36 ? 4 : 2);
}

// The return per installed GPU-hour as the page shows it, and as the e2e test reads it back:
// three decimals, as `airtime ledger` prints it.
export function returnPerGpuHour(x: number | null | undefined): string {
  return fixed(x, 3);
}

// Milliseconds -> "3h05m", "42s", "2d04h".
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "-";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

// Milliseconds since the epoch -> "2026-12-03 04:25:39 UTC".
export function utc(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "-";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

// Ledger buckets between two cumulative snapshots (a window): the differences, never below 0
// (a daemon that started a fresh ledger resets them).
export interface LedgerSnapshot {
  now: number;
  installed_gpu_seconds: number;
  buckets: Partial<Record<BucketName, number>>;
  value: number;
  costs?: CostSnapshot;
}

// The part of /v1/ledger's `costs` a window needs (cumulative since the ledger began).
export interface CostSnapshot {
  cost: number;
  value: number;
  buckets: Partial<Record<string, number>>;
  types: {
    type: string;
    per_hour: number;
    installed_gpu_hours: number;
    allocated_gpu_hours: number;
    cost: number;
    value: number;
    breakeven_allocation: number | null;
  }[];
}

// One GPU type over a window: its cost and value, and the allocation at which it breaks
// even at the value it earned per allocated GPU-hour (docs/costs.md): rate / (value /
// allocated GPU-hours); null when it earned nothing.
export interface TypeWindow {
  type: string;
  perHour: number;
  installedHours: number;
  allocatedHours: number;
  allocation: number | null;
  cost: number;
  value: number;
  margin: number;
  breakeven: number | null;
}

export interface CostWindow {
  cost: number;
  value: number; // as the cost model counts it (all value earned)
  margin: number; // value - cost
  costPerInstalledGpuHour: number | null;
  buckets: Record<BucketName, number>;
  types: TypeWindow[];
}

export interface LedgerWindow {
  from: number;
  to: number;
  installed: number; // GPU-seconds
  buckets: Record<BucketName, number>; // GPU-seconds
  value: number;
  returnPerGpuHour: number | null;
  costs: CostWindow | null; // null: the daemon reports no costs
}

export function ledgerWindow(to: LedgerSnapshot, from: LedgerSnapshot | null, since: number): LedgerWindow {
  const buckets = {} as Record<BucketName, number>;
  for (const b of BUCKETS) {
    const d = (to.buckets[b] ?? 0) - (from ? (from.buckets[b] ?? 0) : 0);
    buckets[b] = Math.max(0, d);
  }
  const installed = Math.max(0, to.installed_gpu_seconds - (from ? from.installed_gpu_seconds : 0));
  const value = Math.max(0, to.value - (from ? from.value : 0));
  return {
    from: from ? from.now : since,
    to: to.now,
    installed,
    buckets,
    value,
    returnPerGpuHour: installed > 0 ? value / (installed / 3600) : null,
    costs: to.costs ? costWindow(to.costs, from ? (from.costs ?? null) : null, installed) : null,
  };
}

// Costs between two cumulative reads; with no earlier read, the daemon's own figures
// (break-even included) unchanged.
export function costWindow(to: CostSnapshot, from: CostSnapshot | null, installedGpuSeconds: number): CostWindow {
  const diff = (a: number, b: number | undefined) => Math.max(0, a - (from ? (b ?? 0) : 0));
  const buckets = {} as Record<BucketName, number>;
  for (const b of BUCKETS) buckets[b] = diff(to.buckets[b] ?? 0, from?.buckets[b]);
  const cost = diff(to.cost, from?.cost);
  const value = diff(to.value, from?.value);
  const types = to.types.map((t): TypeWindow => {
    const before = from?.types.find((x) => x.type === t.type);
    const installedHours = diff(t.installed_gpu_hours, before?.installed_gpu_hours);
    const allocatedHours = diff(t.allocated_gpu_hours, before?.allocated_gpu_hours);
    const tv = diff(t.value, before?.value);
    const tc = diff(t.cost, before?.cost);
    let breakeven: number | null;
    if (!from) breakeven = t.breakeven_allocation;
    else {
      const perAllocated = allocatedHours > 0 ? tv / allocatedHours : 0;
      breakeven = perAllocated > 0 ? t.per_hour / perAllocated : null;
    }
    return {
      type: t.type,
      perHour: t.per_hour,
      installedHours,
      allocatedHours,
      allocation: installedHours > 0 ? allocatedHours / installedHours : null,
      cost: tc,
      value: tv,
      margin: tv - tc,
      breakeven,
    };
  });
  const hours = installedGpuSeconds / 3600;
  return { cost, value, margin: value - cost, costPerInstalledGpuHour: hours > 0 ? cost / hours : null, buckets, types };
}

// Money as the page shows it, and as the e2e test reads it back: two decimals, a minus sign
// for a loss; below 1, three significant digits (a young daemon's costs are fractions of a
// cent), at most 8 decimals.
export function money(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "-";
  return fixed(x, smallDigits(x, 2));
}

// A share as a percentage: one decimal, or two significant digits below 1%.
export function share(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return "-";
  return `${fixed(ratio * 100, smallDigits(ratio * 100, 1))}%`;
}

// Decimals that show `x` to `digits` decimals when |x| >= 1, else to its first digits.
function smallDigits(x: number, digits: number): number {
  const a = Math.abs(x);
  if (a >= 1 || a === 0) return digits;
  return Math.min(8, Math.max(digits, digits - Math.floor(Math.log10(a))));
}

// The money waterfall of a window: from the value earned down through each bucket's cost to
// the margin (below 0 when the GPUs cost more than they earned). Buckets that cost nothing
// are left out.
export function moneyWaterfall(c: CostWindow): WaterfallStep[] {
  const steps: WaterfallStep[] = [{ label: "value", bottom: 0, top: c.value, total: true }];
  let level = c.value;
  for (const b of BUCKETS) {
    const v = c.buckets[b];
    if (v <= 0) continue;
    steps.push({ label: b, bottom: level - v, top: level, total: false });
    level -= v;
  }
  steps.push({ label: "margin", bottom: Math.min(0, c.margin), top: Math.max(0, c.margin), total: true });
  return steps;
}

// The waterfall of a window: from the installed GPU-hours down through each bucket to 0.
// Each step: the bar spans [bottom, top] in GPU-seconds.
export interface WaterfallStep {
  label: string;
  bottom: number;
  top: number;
  total: boolean;
}

export function waterfall(w: LedgerWindow): WaterfallStep[] {
  const steps: WaterfallStep[] = [{ label: "installed", bottom: 0, top: w.installed, total: true }];
  let level = w.installed;
  for (const b of BUCKETS) {
    const v = w.buckets[b];
    if (v <= 0 && (b === "down" || b === "foreign" || b === "lost")) continue;
    steps.push({ label: b, bottom: Math.max(0, level - v), top: level, total: false });
    level -= v;
  }
  return steps;
}

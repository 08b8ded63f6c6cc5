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

// One GPU now, as the daemon knows it: the shares of it that are held and computing
// (allocation x measured utilization), held but idle, and free. Utilization unknown: the
// held share counts as held, of unknown use.
export interface GpuSplit {
  held: number; // 0..1
  busy: number; // of the whole GPU, 0..1
  idle: number; // held - busy
  free: number; // 1 - held
  known: boolean; // whether utilization was measured
  state: "useful" | "idle_held" | "free" | "held_unknown";
}

export function splitGpu(allocatedMilli: number, utilization: number | null | undefined): GpuSplit {
  const held = Math.min(1, Math.max(0, allocatedMilli / 1000));
  const known = utilization !== null && utilization !== undefined && Number.isFinite(utilization);
  const util = known ? Math.min(1, Math.max(0, utilization as number)) : 0;
  const busy = known ? Math.min(held, util) : 0;
  const idle = held - busy;
  let state: GpuSplit["state"];
  if (held <= 0) state = "free";
  else if (!known) state = "held_unknown";
  else state = busy >= idle ? "useful" : "idle_held";
  return { held, busy, idle, free: 1 - held, known, state };
}

// Ledger buckets between two cumulative snapshots (a window): the differences, never below 0
// (a daemon that started a fresh ledger resets them).
export interface LedgerSnapshot {
  now: number;
  installed_gpu_seconds: number;
  buckets: Partial<Record<BucketName, number>>;
  value: number;
}

export interface LedgerWindow {
  from: number;
  to: number;
  installed: number; // GPU-seconds
  buckets: Record<BucketName, number>; // GPU-seconds
  value: number;
  returnPerGpuHour: number | null;
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
  };
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

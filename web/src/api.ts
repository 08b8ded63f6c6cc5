// The daemon's API as the page reads it (docs/api.md): same origin, the token of the
// session as "Authorization: Bearer".

export interface Allocation {
  workload: number;
  name: string;
  tenant: string;
  milli: number;
  run: number | null;
}

export interface Gpu {
  index: number;
  uuid: string;
  model: string;
  type: string;
  memory_mib: number;
  fake: boolean;
  scheduled: boolean;
  utilization?: number | null;
  memory_used_mib?: number | null;
  power_w?: number | null;
  sampled_at?: number;
  allocations: Allocation[];
  // The ledger bucket holding most of the GPU now, and its capacity by bucket (milli-GPUs);
  // null and {} for a GPU airtime does not schedule, absent from daemons before them.
  bucket?: string | null;
  bucket_milli?: Record<string, number>;
}

export interface Workload {
  id: number;
  name: string;
  tenant: string;
  kind: string;
  state: string;
  priority: number;
  submitted_at: number;
  started_at: number | null;
  finished_at: number | null;
  preemptions: number;
  demand_rps: number;
  gpus: string[];
  replicas?: { running: number; target: number };
  reason: string;
  explanation?: string;
  // A member of a service with model variants: the service's name, its variant's, and the
  // service's mix (which variants serve each class, as `airtime describe` shows it).
  service?: string;
  variant?: string;
  mix?: string;
}

export interface WorkloadList {
  workloads: Workload[];
  total?: number; // matching workloads before limit/offset (daemons since the dashboard)
}

export interface Ledger {
  since: number;
  now: number;
  daemon_started: number;
  unobserved_seconds: number;
  installed_gpu_seconds: number;
  buckets: Record<string, number>;
  value: number;
  return_per_gpu_hour: number | null;
  costs?: Costs; // absent from daemons before the cost model
}

// What a GPU type cost over the ledger's span (docs/costs.md), cumulative like the buckets.
export interface TypeCost {
  type: string;
  basis: string; // per_hour, measured_power, catalogue_power or unpriced
  per_hour: number;
  installed_gpu_hours: number;
  allocated_gpu_hours: number;
  allocation: number;
  cost: number;
  value: number;
  margin: number;
  value_per_allocated_gpu_hour: number;
  breakeven_allocation: number | null;
  buckets: Record<string, number>;
}

export interface Costs {
  cost: number;
  value: number;
  margin: number;
  cost_per_installed_gpu_hour: number;
  unattributed_value: number;
  buckets: Record<string, number>;
  types: TypeCost[];
  unpriced: string[];
}

export interface HoldCall {
  t_s: number;
  until_s: number | null;
  service: string;
  choice: string;
  demand_rps: number;
  forecast_rps: number;
  replicas_needed: number;
  replicas_held: number;
  hold_value: number;
  handoff_value: number;
  why: string;
  burst_came: boolean;
  value_protected: number;
  value_forgone: number;
  regret: number;
}

export interface HoldSummary {
  holds: number;
  holds_burst_came: number;
  handoffs: number;
  handoffs_burst_came: number;
  held_gpu_hours: number;
  value_protected: number;
  value_forgone: number;
  regret: number;
  holds_paid: boolean;
}

export interface Holds {
  decisions: HoldCall[];
  decisions_kept: number;
  now: number;
  services: Record<string, HoldSummary>;
}

export interface HistorySeries {
  allocated: (number | null)[];
  utilization: (number | null)[];
}

export interface GpuHistory {
  step_s: number;
  start: number; // ms: the first slot's start
  now: number;
  cluster: HistorySeries;
  gpus: (HistorySeries & { uuid: string; index: number })[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = "airtime.token";

export function savedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token: string | null) {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

async function request(path: string, token: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, {
      headers: { Authorization: `Bearer ${token}` },
      cache: "no-store",
      credentials: "omit",
    });
  } catch (e) {
    throw new ApiError(0, `cannot reach the daemon (${String(e)})`);
  }
  if (!res.ok) {
    let message = `${path}: HTTP ${res.status}`;
    try {
      const body = await res.json();
      if (body?.error?.message) message = `${path}: ${body.error.message}`;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(res.status, message);
  }
  return res;
}

export async function getJson<T>(path: string, token: string): Promise<T> {
  return (await request(path, token)).json() as Promise<T>;
}

export async function getText(path: string, token: string): Promise<string> {
  return (await request(path, token)).text();
}

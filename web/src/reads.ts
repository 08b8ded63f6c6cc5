// What each view reads from the daemon, and the reads themselves. The entry (main.ts) starts
// the shown view's reads before the rest of the page's script has loaded; app.ts makes the
// others after the shown view is drawn.
import { ApiError, type Gpu, type GpuHistory, getJson, getText, type Holds, type Ledger, type WorkloadList } from "./api";

// Active workloads per page of the queue.
export const PAGE_SIZE = 200;

export const VIEWS = ["gpus", "ledger", "queue", "holds", "tenants"] as const;
export type View = (typeof VIEWS)[number];

export interface Data {
  gpus: Gpu[];
  ledger: Ledger;
  list: WorkloadList;
  holds: Holds;
  metrics: string;
  history: GpuHistory | null; // null: a daemon without the endpoint
}
export type Kind = keyof Data;
export const KINDS: Kind[] = ["gpus", "ledger", "list", "holds", "metrics", "history"];

// The reads each view is drawn from.
export const NEEDS: Record<View, Kind[]> = {
  gpus: ["gpus", "ledger", "history"],
  ledger: ["ledger"],
  queue: ["list", "ledger"],
  holds: ["holds"],
  tenants: ["metrics", "gpus"],
};

// Where the page stands when it reads: the queue's page and the GPU picked on the map.
export interface ReadContext {
  queueOffset: number;
  queueLimit: number;
  gpu: string | null;
}

export type Reads = { [K in Kind]?: Promise<Data[K]> };

export function read<K extends Kind>(kind: K, token: string, ctx: ReadContext): Promise<Data[K]> {
  const p = ((): Promise<unknown> => {
    switch (kind) {
      case "gpus":
        return getJson<{ gpus: Gpu[] }>("/v1/gpus", token).then((r) => r.gpus);
      case "ledger":
        return getJson<Ledger>("/v1/ledger", token);
      case "list":
        return getJson<WorkloadList>(`/v1/workloads?state=active&limit=${ctx.queueLimit}&offset=${ctx.queueOffset}`, token);
      case "holds":
        return getJson<Holds>("/v1/holds?limit=500", token);
      case "metrics":
        return getText("/metrics", token);
      case "history":
        return readHistory(token, ctx.gpu);
    }
    throw new Error(`unknown read ${String(kind)}`);
  })();
  return p as Promise<Data[K]>;
}

// The cluster's day, and the picked GPU's; null from a daemon without the endpoint.
export async function readHistory(token: string, gpu: string | null): Promise<GpuHistory | null> {
  const query = gpu ? `?gpu=${encodeURIComponent(gpu)}` : "";
  try {
    return await getJson<GpuHistory>(`/v1/gpus/history${query}`, token);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

// The view the address names (#queue), else the GPU map.
export function viewOfHash(hash: string): View {
  const v = hash.replace(/^#/, "") as View;
  return VIEWS.includes(v) ? v : "gpus";
}

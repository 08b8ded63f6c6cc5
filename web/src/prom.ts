// A reader of the Prometheus text exposition format (0.0.4) for the samples the page needs:
// name, labels and value per line; comments and malformed lines are skipped.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?\s*$/;

function parseLabels(text: string): Record<string, string> | null {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    while (text[i] === "," || text[i] === " ") i++;
    if (i >= text.length) break;
    const eq = text.indexOf("=", i);
    if (eq < 0 || text[eq + 1] !== '"') return null;
    const key = text.slice(i, eq).trim();
    let j = eq + 2;
    let value = "";
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\" && j + 1 < text.length) {
        const c = text[++j];
        value += c === "n" ? "\n" : c;
      } else {
        value += text[j];
      }
    }
    if (j >= text.length) return null;
    labels[key] = value;
    i = j + 1;
  }
  return labels;
}

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels = m[3] !== undefined ? parseLabels(m[3]) : {};
    if (!labels) continue;
    const value = Number(m[4]);
    if (Number.isNaN(value) && m[4] !== "NaN") continue;
    out.push({ name: m[1], labels, value });
  }
  return out;
}

// Per tenant, from the airtime_tenant_* gauges and airtime_{allocated,utilized}_gpus (summed
// over kinds).
export interface TenantRow {
  tenant: string;
  allocated: number;
  utilized: number | null;
  deserved: number | null;
  fairShare: number | null;
  borrowed: number | null;
}

export function tenantsFromMetrics(samples: Sample[]): { rows: TenantRow[]; quotas: boolean } {
  const rows = new Map<string, TenantRow>();
  const row = (t: string) => {
    let r = rows.get(t);
    if (!r) {
      r = { tenant: t, allocated: 0, utilized: null, deserved: null, fairShare: null, borrowed: null };
      rows.set(t, r);
    }
    return r;
  };
  let quotas = false;
  const fromTenantGauge = new Set<string>();
  for (const s of samples) {
    const t = s.labels.tenant;
    if (t === undefined) continue;
    switch (s.name) {
      case "airtime_tenant_allocated_gpus":
        row(t).allocated = s.value;
        fromTenantGauge.add(t);
        break;
      case "airtime_tenant_deserved_gpus":
        row(t).deserved = s.value;
        quotas = true;
        break;
      case "airtime_tenant_fair_share_gpus":
        row(t).fairShare = s.value;
        break;
      case "airtime_tenant_borrowed_gpus":
        row(t).borrowed = s.value;
        break;
      case "airtime_utilized_gpus":
        row(t).utilized = (row(t).utilized ?? 0) + s.value;
        break;
    }
  }
  // airtime_allocated_gpus (per tenant and kind) where the per-tenant gauge is missing.
  for (const s of samples) {
    const t = s.labels.tenant;
    if (s.name !== "airtime_allocated_gpus" || t === undefined || fromTenantGauge.has(t)) continue;
    row(t).allocated += s.value;
  }
  const list = [...rows.values()].sort((a, b) => b.allocated - a.allocated || a.tenant.localeCompare(b.tenant));
  return { rows: list, quotas };
}

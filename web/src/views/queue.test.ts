import { describe, expect, it } from "vitest";
import type { Workload } from "../api";
import { detailPath, serviceGroups, serviceKey, summarize } from "./queue";

const base: Workload = {
  id: 0,
  name: "",
  tenant: "t",
  kind: "realtime",
  state: "running",
  priority: 0,
  submitted_at: 1000,
  started_at: 2000,
  finished_at: null,
  preemptions: 0,
  demand_rps: 0,
  gpus: [],
  reason: "",
};
const w = (o: Partial<Workload>): Workload => ({ ...base, ...o });

describe("a service with model variants in the queue", () => {
  // Newest first, as the view draws them: members of one service, and a job between.
  const rows = [
    w({ id: 9, name: "chat/coder", service: "chat", variant: "coder", state: "queued", submitted_at: 500, started_at: null, replicas: { running: 0, target: 1 } }),
    w({ id: 8, name: "job", kind: "batch", gpus: ["g3"] }),
    w({ id: 7, name: "chat/big", service: "chat", variant: "big", gpus: ["g1", "g2"], replicas: { running: 2, target: 2 }, mix: "code: 100% big; conv: 100% big (...)" }),
  ];
  it("groups the members of each service, in variant order", () => {
    const groups = serviceGroups(rows);
    expect([...groups.keys()]).toEqual(["chat"]);
    expect(groups.get("chat")!.map((m) => m.name)).toEqual(["chat/big", "chat/coder"]);
  });
  it("sums the members' replicas and GPUs, and takes the service's mix", () => {
    const s = summarize(serviceGroups(rows).get("chat")!);
    expect(s).toEqual({ state: "running", gpus: 2, running: 2, target: 3, since: 500, mix: "code: 100% big; conv: 100% big (...)" });
    expect(summarize([rows[0]]).state).toBe("queued");
    expect(summarize([rows[0]]).mix).toBe("");
  });
  it("reads a service's detail by its name, a workload's by its id", () => {
    expect(detailPath(serviceKey("chat bot"))).toBe("chat%20bot");
    expect(detailPath("12")).toBe("12");
  });
});

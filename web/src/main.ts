// The page's entry: small, so that it runs as soon as it arrives. With a token already in the
// tab it starts the reads the shown view needs at once, then loads the rest of the page
// (app.ts: the views, uPlot) while those reads are on the wire, and hands them over.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { savedToken } from "./api";
import { NEEDS, PAGE_SIZE, type Reads, read, viewOfHash } from "./reads";

declare global {
  interface Window {
    // performance.now() when the first refresh had drawn the shown view with its data (the
    // benchmark's time to interactive), and the number of refreshes done.
    airtimeReadyAt?: number;
    airtimeRefreshes?: number;
    // The first refresh's steps: ms since navigation when each ended (the benchmark prints them).
    airtimeTimings?: Record<string, number>;
  }
}

const timings = (window.airtimeTimings ??= {});
timings.entry = performance.now();
const token = savedToken();
let early: Reads | null = null;
if (token) {
  const view = viewOfHash(location.hash);
  early = {};
  const ctx = { queueOffset: 0, queueLimit: PAGE_SIZE, gpu: null };
  for (const kind of NEEDS[view]) (early as Record<string, Promise<unknown>>)[kind] = read(kind, token, ctx);
  // A failed read is reported by the app when it awaits it; never as an unhandled rejection.
  for (const p of Object.values(early)) p?.catch(() => {});
}
void import("./app").then((app) => {
  timings.app = performance.now();
  app.start(early);
});

// Builds the dashboard into dist/ (or --outDir): index.html, hashed assets/ and the files of
// public/. The C++ build embeds them in the airtime binary (cmake/embed_web.cmake), so
// everything must be same-origin and free of inline script: the daemon serves the page
// under a Content-Security-Policy of script-src 'self'.
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

// The page's entry (src/main.ts) starts the API reads and then imports the rest (src/app.ts):
// a <link rel="modulepreload"> for that chunk lets the browser fetch and compile it while the
// entry runs and the reads are on the wire, rather than after.
function preloadApp(): Plugin {
  return {
    name: "airtime-preload-app",
    enforce: "post",
    transformIndexHtml(_html, ctx) {
      const app = Object.values(ctx.bundle ?? {}).find((c) => c.type === "chunk" && c.name === "app");
      return app ? [{ tag: "link", attrs: { rel: "modulepreload", href: `/${app.fileName}` }, injectTo: "head" }] : [];
    },
  };
}

// `npx vite` serves the sources with hot reload and passes the API to a daemon:
// AIRTIME_ADDR=HOST:PORT (default 127.0.0.1:8470).
const daemon = `http://${(process.env.AIRTIME_ADDR ?? "127.0.0.1:8470").replace(/^https?:\/\//, "")}`;

export default defineConfig({
  base: "/",
  plugins: [preloadApp()],
  server: { proxy: { "/v1": daemon, "/metrics": daemon } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // The polyfill would be an inline script; every browser the page targets has
    // modulepreload.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0, // no data: URLs: the CSP allows same-origin images only
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.ts"],
  },
});

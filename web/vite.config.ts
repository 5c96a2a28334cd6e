// The page is served by the edge (okey101 serve edge) from web/dist at `/`, index.html for any
// other path (/table/ID, /watch/ID): assets are addressed from the root.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  server: {
    // `npm run dev` (a development server on :5173) calls the edge of `make run`.
    proxy: { "/okey.v1.": "http://127.0.0.1:8080" },
  },
});

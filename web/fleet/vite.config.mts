import { defineConfig } from 'vite';

// The fleet dashboard: static files only, same origin as the API (/api/*).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // no inline module preload polyfill: the CSP allows scripts from 'self' only
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});

import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The manager: built from web/ into web/dist, served by the service at `/` (src/http/manager.ts). */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    // `npx vite web` during development: API calls go to a service running on :7070.
    proxy: Object.fromEntries(
      [
        '/q',
        '/administration',
        '/agents',
        '/agentstore',
        '/regulardictionarystore',
        '/behaviorstore',
        '/outputstore',
        '/packagestore',
        '/propertysetterstore',
        '/httpcallsstore',
        '/langchainstore',
        '/descriptorstore',
        '/deploymentstore',
        '/conversationstore',
        '/bottriggerstore',
        '/secretstore',
        '/backup',
        '/workspaces',
        '/manager/config.json',
      ].map((prefix) => [prefix, 'http://localhost:7070']),
    ),
  },
});

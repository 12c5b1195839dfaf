// Development only (the installed service runs dist/builder/worker.js): worker threads do not
// inherit tsx's loader from every parent (vitest, node --import),
// so each worker registers it before loading the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');

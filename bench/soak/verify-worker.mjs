// Worker threads do not inherit tsx's loader from every parent, so the worker registers it
// before loading the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./verify-worker.ts');

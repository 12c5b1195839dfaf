#!/usr/bin/env node
// The package's bin: registers tsx so the TypeScript sources run as they are, then starts the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../cli/cli.ts');

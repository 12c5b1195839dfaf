import { runMvr } from './mvr.ts';

// The bin's shell (bin/mvr.js loads it): the one place the CLI meets this process's environment,
// output streams and exit code. Everything else under cli/ takes them from the run's `io`.
process.exitCode = await runMvr(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr });

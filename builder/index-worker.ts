import { parentPort, workerData } from 'node:worker_threads';
import { IndexAndMap, type IndexInit, type IndexTask } from './index-and-map.ts';

// The index and map phases of a build, in the thread ./index-thread.ts starts: each task answered
// as the pool expects (./worker-pool.ts), where the records are handed over without a copy.

const work = new IndexAndMap(workerData as IndexInit);

parentPort!.on('message', async (msg: IndexTask & { id: number }) => {
  try {
    if (msg.step === 'index') parentPort!.postMessage({ id: msg.id, ...(await work.index()) });
    else {
      const mapped = await work.map();
      parentPort!.postMessage({ id: msg.id, ...mapped }, [mapped.places.places.buffer, mapped.places.ends.buffer]);
    }
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    parentPort!.postMessage({ id: msg.id, fatal: { message: e.message, code: e.code } });
  }
});

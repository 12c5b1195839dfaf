import { workerData } from 'node:worker_threads';
import { IndexAndMap, type Indexed, type IndexInit, type IndexTask, type Mapped } from './index-and-map.ts';
import { answerTasks } from './worker-pool.ts';

// The index and map phases of a build, in the thread ./index-thread.ts starts; where the records
// are in the packs is handed over without a copy.

const work = new IndexAndMap(workerData as IndexInit);

answerTasks<IndexTask, Indexed | Mapped>(
  (task) => work.run(task),
  (result) => ('places' in result ? [result.places.places.buffer, result.places.ends.buffer] : []),
);

import { threadId, workerData } from 'node:worker_threads';
import { AuditSigner, type Batch, type BatchResult, type WorkerInit } from './audit-signer.ts';
import { answerTasks } from './worker-pool.ts';

// A build worker thread (./dispatch.ts starts them): its batches signed and spilled by one AuditSigner.

const signer = new AuditSigner(workerData as WorkerInit, threadId);

answerTasks<Batch, BatchResult>((batch) => signer.process(batch));

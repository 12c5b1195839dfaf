import { closeSync, openSync } from 'node:fs';
import { writeAllSync } from '../core/files.ts';

/** Bytes gathered before one write: a few system calls a hundred kilobytes, not one a line. */
const CHUNK = 64 * 1024;

/**
 * A file written a line at a time (the index, a shard's log.jsonl), through one buffer of its own:
 * lines wait there as bytes. Gathered as strings instead, they outlived the young generation, and
 * each shard's lines became a buffer of its own to write, whose freed memory the allocator kept
 * (at a million records, tens of megabytes of RSS over what the process held).
 */
export class LineFile {
  private readonly fd: number;
  private readonly pending = Buffer.allocUnsafe(CHUNK);
  private used = 0;
  /** Bytes written so far, the pending ones included. */
  bytes = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  /** Appends `line` (its newline included). */
  write(line: string): void {
    const length = Buffer.byteLength(line);
    if (this.used + length > CHUNK) this.flush();
    // A line longer than the buffer (neither file has one: a domain is at most 253 bytes) goes out on its own.
    if (length > CHUNK) writeAllSync(this.fd, line);
    else this.used += this.pending.write(line, this.used);
    this.bytes += length;
  }

  /** Writes what is pending and closes the file; closed even when that write fails (a full disk), so a failed build holds no file open. */
  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }

  private flush(): void {
    if (this.used > 0) writeAllSync(this.fd, this.pending.subarray(0, this.used));
    this.used = 0;
  }
}

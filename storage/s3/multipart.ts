import { StoreUnavailableError } from '../../core/errors.ts';
import type { PartSource, Slot } from '../store.ts';
import type { S3Bucket } from './bucket.ts';
import { xmlText } from './xml.ts';

/**
 * Uploads an object in parts (S3's CreateMultipartUpload, UploadPart, CompleteMultipartUpload), each
 * part read from `source` only when its request gets a `slot`, so memory stays at a part per slot.
 * The object appears whole at the last step or not at all. Any failure aborts the upload (so the
 * bucket keeps no parts nobody will complete; best effort, a lifecycle rule on the bucket clears
 * what an abort could not) and is thrown.
 */
export async function putInParts(bucket: S3Bucket, key: string, contentType: string, source: PartSource, slot: Slot): Promise<void> {
  const created = await slot(() => bucket.request('POST', key, { query: { uploads: '' }, headers: { 'content-type': contentType } }));
  const uploadId = xmlText(created.body, 'UploadId');
  if (!uploadId) throw new StoreUnavailableError(`POST ${bucket.name}/${key}?uploads answered no UploadId`);
  const count = Math.max(1, Math.ceil(source.bytes / source.partBytes));
  let failed = false;
  const part = (n: number) =>
    slot(async () => {
      if (failed) throw new StoreUnavailableError('an earlier part failed');
      const start = (n - 1) * source.partBytes;
      const body = await source.read(start, Math.min(source.partBytes, source.bytes - start));
      const res = await bucket.request('PUT', key, { query: { partNumber: String(n), uploadId }, body });
      return String(res.headers.etag ?? '');
    }).catch((error: unknown) => {
      failed = true;
      throw error;
    });
  try {
    // Settled, not raced: the abort comes after every part's request has ended.
    const parts = await Promise.allSettled(Array.from({ length: count }, (_, i) => part(i + 1)));
    const refused = parts.find((p) => p.status === 'rejected');
    if (refused) throw refused.reason;
    const etags = parts.map((p) => (p as PromiseFulfilledResult<string>).value);
    const xml = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    const done = await slot(() =>
      bucket.request('POST', key, { query: { uploadId }, headers: { 'content-type': 'application/xml' }, body: Buffer.from(xml) }),
    );
    // S3 may answer 200 and still fail the completion, with an error document as the body.
    const code = xmlText(done.body, 'Code');
    if (code)
      throw new StoreUnavailableError(
        `completing the upload of ${bucket.name}/${key} failed: ${code} ${xmlText(done.body, 'Message') ?? ''}`,
      );
  } catch (error) {
    // Not through a slot: a caller that stops its requests after a failure still has its uploads aborted.
    await bucket.request('DELETE', key, { query: { uploadId } }).catch(() => undefined);
    throw error;
  }
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

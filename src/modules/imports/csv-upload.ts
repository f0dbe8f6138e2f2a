import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../lib/app-error.js';

/** A CSV import's body may be far larger than a JSON body (BODY_LIMIT_BYTES); past this it is 413. */
export const CSV_UPLOAD_LIMIT_BYTES = 512 * 1024 * 1024;

/**
 * A CSV file posted to the import endpoint, kept on disk while the job reads it: the body is streamed to a
 * temporary file (memory stays flat), the answer (202) goes out once it is whole, and the job reads the file
 * at its own pace and removes it at the end.
 */
export interface CsvUpload {
  open(): Readable;
  remove(): Promise<void>;
}

export async function spoolCsvUpload(body: Readable, limit = CSV_UPLOAD_LIMIT_BYTES): Promise<CsvUpload> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-import-'));
  const file = join(dir, 'upload.csv');
  let size = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limit) done(new AppError('PAYLOAD_TOO_LARGE', `A CSV import is at most ${limit} bytes`));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(body, cap, createWriteStream(file));
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return { open: () => createReadStream(file), remove: () => rm(dir, { recursive: true, force: true }) };
}

import type busboyT from 'busboy';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ApiError, badRequest } from '../../http/errors.js';
import { loadBusboy } from '../../lazy/modules.js';

export const DEPLOY_FIELDS = ['name', 'framework', 'runtime', 'code', 'config'] as const;

export interface DeployUpload {
  fields: Partial<Record<'name' | 'framework' | 'runtime' | 'config', string>>;
  /** Temporary path of the uploaded archive; `cleanup()` removes it. */
  codePath?: string;
  cleanup(): void;
}

/**
 * Streams a deploy's multipart body: text fields into memory, the code archive to a temporary
 * file, with the upload cap (MAX_UPLOAD_BYTES) enforced while streaming. Unknown fields (a
 * project_id among them: the project comes only from ?project=) are a 400 naming the accepted
 * fields (spec 1 §4.12).
 */
export async function readDeployUpload(req: IncomingMessage, tmpRoot: string, maxBytes: number): Promise<DeployUpload> {
  const type = String(req.headers['content-type'] ?? '');
  if (!/^multipart\/form-data/i.test(type)) throw badRequest('invalid multipart: the deploy body must be multipart/form-data with fields name, framework, runtime, code, config');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooBig(maxBytes);
  const dir = mkdtempSync(join(tmpRoot, 'upload-'));
  const upload: DeployUpload = { fields: {}, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  let failure: ApiError | undefined;
  let received = 0;
  const fileWrites: Promise<void>[] = [];
  try {
    const bb = (loadBusboy() as unknown as typeof busboyT)({ headers: req.headers, limits: { fieldSize: 1024 * 1024, fields: 20, files: 2 } });
    const accepted = `accepted fields: ${DEPLOY_FIELDS.join(', ')} (the project comes from ?project=)`;
    bb.on('field', (name, value) => {
      if (failure) return;
      if (!(DEPLOY_FIELDS as readonly string[]).includes(name) || name === 'code') {
        failure = badRequest(`unknown form field: ${name}; ${accepted}`);
        return;
      }
      upload.fields[name as keyof DeployUpload['fields']] = value;
    });
    bb.on('file', (name, stream) => {
      if (failure || name !== 'code') {
        failure ??= badRequest(name === 'code' ? 'duplicate code file' : `unknown form field: ${name}; ${accepted}`);
        stream.resume();
        return;
      }
      if (upload.codePath) {
        failure = badRequest('invalid multipart: more than one code file');
        stream.resume();
        return;
      }
      upload.codePath = join(dir, 'code.tar.gz');
      fileWrites.push(pipeline(stream, createWriteStream(upload.codePath)));
    });
    await new Promise<void>((resolve) => {
      req.on('data', (c: Buffer) => {
        received += c.length;
        if (received > maxBytes && !failure) {
          failure = tooBig(maxBytes);
          req.unpipe(bb);
          bb.destroy();
          req.resume();
          resolve();
        }
      });
      bb.on('close', () => resolve());
      bb.on('error', (e: Error) => {
        failure ??= badRequest(`invalid multipart: ${e.message}`);
        resolve();
      });
      // A client that hangs up mid-upload: busboy would wait for the rest forever, and with it the
      // code file's write (a pending request, an open file, a temp dir never removed).
      const gone = () => {
        if (req.complete) return;
        failure ??= badRequest('upload aborted: the client closed the connection before the body ended');
        bb.destroy(new Error('the client closed the connection mid-upload'));
        resolve();
      };
      req.on('aborted', gone);
      req.on('close', gone);
      req.pipe(bb);
    });
    await Promise.all(fileWrites).catch((e: Error) => {
      failure ??= badRequest(`invalid multipart: ${e.message}`);
    });
    if (failure) throw failure;
    return upload;
  } catch (e) {
    upload.cleanup();
    throw e;
  }
}

const tooBig = (max: number) => new ApiError(413, `code upload exceeds ${max} bytes (MAX_UPLOAD_BYTES)`);

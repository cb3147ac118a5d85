import { lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { OBJECT_BODY_LIMIT, triggerRoutes as R } from '../../../api/triggers.js';
import type { AreaContext } from '../../area.js';
import { readBody } from '../../http/body.js';
import { ApiError, conflict } from '../../http/errors.js';
import { Reply, type Router } from '../../http/router.js';
import { accessProject } from '../accounts/projects.js';
import type { Principal } from '../auth/principal.js';
import { bucketDir, checkBucket, checkKey, ensureBucket, statObject, walkBucket } from './objects.js';
import type { ObjectSource } from './object-source.js';

/**
 * Objects of local buckets (docs/decisions/triggers.md): put, list, get, delete. A put lands in a
 * dot-named temporary file and is renamed into place, so a watcher never sees half an object,
 * then fires the bucket's triggers at once (the watcher's later event finds the version seen).
 */
export function registerObjectRoutes(r: Router, ctx: AreaContext, objects: () => ObjectSource): void {
  const member = (p: Principal | undefined, ref: string) => accessProject(ctx, p!, ref, 'member').project;
  const view = (bucket: string, key: string, size: number, mtimeMs: number) => ({ bucket, key, size, updated_at: new Date(mtimeMs).toISOString() });

  r.raw(R.putObject, async ({ principal, req, res }, raw) => {
    const project = member(principal, raw.projectID!);
    const bucket = checkBucket(raw.bucket!);
    const key = checkKey(raw.key!);
    const data = await readBody(req, OBJECT_BODY_LIMIT);
    const dir = ensureBucket(ctx.config.home, project.short, bucket);
    // Every existing folder on the way must be a real folder inside the bucket (no link, no file).
    let p = dir;
    const segs = key.split('/');
    for (const seg of segs.slice(0, -1)) {
      p = join(p, seg);
      let st;
      try {
        st = lstatSync(p);
      } catch {
        break;
      }
      if (!st.isDirectory()) throw conflict(`cannot store ${key}: ${seg} is an object, not a folder, in bucket ${bucket}`);
    }
    const file = join(dir, ...segs);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      if (lstatSync(file).isDirectory() || lstatSync(file).isSymbolicLink()) throw conflict(`cannot store ${key}: a folder or link of that name exists in bucket ${bucket}`);
    } catch (e) {
      if (e instanceof ApiError) throw e;
    }
    const tmp = join(dir, `.upload-${randomBytes(8).toString('hex')}`);
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
    const st = statObject(ctx.config.home, project.short, bucket, key);
    objects().arrived(project.id, bucket, { key, size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
    const body = JSON.stringify(view(bucket, key, st.size, st.mtimeMs));
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  });

  r.handle(R.listObjects, ({ principal, params, query }) => {
    const project = member(principal, params.projectID);
    const bucket = checkBucket(params.bucket);
    const page = ctx.pager.parse(query, `objects:${project.id}:${bucket}:${query.prefix ?? ''}`);
    const all = walkBucket(bucketDir(ctx.config.home, project.short, bucket), query.prefix ?? '');
    const { items, next_page_token } = ctx.pager.slice(page, all.slice(page.offset, page.offset + page.size + 1));
    return { objects: items.map((o) => view(bucket, o.key, o.size, o.mtimeMs)), ...(next_page_token ? { next_page_token } : {}) };
  });

  r.raw(R.getObject, async ({ principal, res }, raw) => {
    const project = member(principal, raw.projectID!);
    const bucket = checkBucket(raw.bucket!);
    const key = checkKey(raw.key!);
    statObject(ctx.config.home, project.short, bucket, key);
    const data = readFileSync(join(bucketDir(ctx.config.home, project.short, bucket), ...key.split('/')));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length }).end(data);
  });

  r.handle(R.deleteObject, ({ principal, params }) => {
    const project = member(principal, params.projectID);
    const bucket = checkBucket(params.bucket);
    const key = checkKey(params.key);
    statObject(ctx.config.home, project.short, bucket, key);
    unlinkSync(join(bucketDir(ctx.config.home, project.short, bucket), ...key.split('/')));
    objects().forget(project.id, bucket, key);
    return new Reply(204, undefined);
  });
}

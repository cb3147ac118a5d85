import {
  EDITABLE_INDEX_FIELDS,
  IMMUTABLE_INDEX_FIELDS,
  VECTOR_LIMITS as L,
  type CreateIndexBody,
  type Distance,
  type IndexView,
  type PatchIndexBody,
  type QuantizationKind,
} from '../../../api/vector.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { ProjectAccess, ProjectRow } from '../accounts/access.js';
import { actorName, type Principal } from '../auth/principal.js';
import type { VectorRuntime } from './runtime.js';
import type { IndexRow } from './store.js';

const NAME_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

const DISTANCE_ALIASES: Record<string, Distance> = {
  cosine: 'cosine',
  dot: 'dot',
  dotproduct: 'dot',
  dot_product: 'dot',
  euclid: 'euclid',
  euclidean: 'euclid',
  l2: 'euclid',
};
const QUANTIZATION_ALIASES: Record<string, QuantizationKind> = { none: 'none', scalar: 'scalar', int8: 'scalar', binary: 'binary' };

export const isValidIndexName = (name: string) => name.length <= L.nameMax && NAME_RE.test(name);

/**
 * The index as the API shows it. `collection_status` follows Qdrant: green when searchable through
 * its graph, yellow while the graph is being (re)built after a start (queries are exact scans then).
 * A yellow index is still ready (usable now), so it carries no `message`: spec 1 §2.1 keeps that
 * field for why a resource is not ready.
 */
export function indexView(row: IndexRow, project: ProjectRow, rt: Pick<VectorRuntime, 'graphComplete'>): IndexView {
  const ready = row.state === 'ready';
  const building = ready && !rt.graphComplete(row.id);
  return {
    name: row.name,
    resource_path: `projects/${project.short}/indexes/${row.name}`,
    collection: collectionName(project, row.name),
    dimensions: row.dimensions,
    distance: row.distance,
    on_disk: Boolean(row.on_disk),
    payload_on_disk: Boolean(row.payload_on_disk),
    quantization: {
      kind: row.q_kind,
      ...(row.q_quantile ? { quantile: row.q_quantile } : {}),
      always_ram: Boolean(row.q_always_ram),
    },
    shards: row.shards,
    replicas: row.replicas,
    state: row.state,
    ready,
    ...(ready ? { collection_status: building ? ('yellow' as const) : ('green' as const) } : {}),
    points_count: row.points_count,
    vectors_count: row.vectors_count,
    segments_count: row.segments_count,
    ...(row.message ? { message: row.message } : ready ? {} : { message: 'the collection is being created; data operations answer 409 until ready is true' }),
    created_at: row.created_at,
  };
}

export const collectionName = (project: ProjectRow, name: string) => `p_${project.short}_${name}`;

/** Validates a create body into a row; every rule of spec 3 §4.1 with the offending value named. */
export function validateCreate(body: CreateIndexBody, defaultDims: number): Omit<IndexRow, 'id' | 'project_id' | 'created_at' | 'state'> {
  const name = body.name;
  if (name.length > L.nameMax) throw badRequest(`invalid name: at most ${L.nameMax} characters (got ${name.length})`);
  if (!NAME_RE.test(name)) {
    throw badRequest(`invalid name "${name}": use lowercase letters, digits and hyphens, starting and ending with a letter or digit`);
  }
  const dims = body.dimensions === undefined || body.dimensions === 0 ? defaultDims : body.dimensions;
  if (!(Number.isInteger(dims) && dims >= L.dimensionsMin && dims <= L.dimensionsMax)) {
    throw badRequest(`dimensions must be an integer between ${L.dimensionsMin} and ${L.dimensionsMax} (0 or omitted uses the default, ${defaultDims}); got ${body.dimensions}`);
  }
  const distance = DISTANCE_ALIASES[(body.distance ?? 'cosine').toLowerCase()];
  if (!distance) {
    throw badRequest(`invalid distance "${body.distance}": must be one of cosine, dot (aliases dotproduct, dot_product), euclid (aliases euclidean, l2)`);
  }
  const q = body.quantization ?? {};
  const kind = QUANTIZATION_ALIASES[(q.kind ?? 'none').toLowerCase()];
  if (!kind) throw badRequest(`invalid quantization.kind "${q.kind}": must be one of none, scalar (alias int8), binary`);
  if (q.quantile !== undefined) {
    if (kind !== 'scalar') throw badRequest('quantization.quantile applies only to scalar quantization');
    const v = Number(q.quantile);
    if (!/^\s*\d*\.?\d+\s*$/.test(q.quantile) || !(v >= 0.5 && v <= 1)) {
      throw badRequest(`invalid quantization.quantile "${q.quantile}": must be a number between 0.5 and 1 written as a string, e.g. "0.99"`);
    }
  }
  const shards = body.shards ?? 1;
  if (!(Number.isInteger(shards) && shards >= 1 && shards <= L.shardsMax)) throw badRequest(`shards must be an integer between 1 and ${L.shardsMax}; got ${shards}`);
  const replicas = body.replicas ?? 1;
  checkReplicas(replicas);
  return {
    name,
    dimensions: dims,
    distance,
    on_disk: body.on_disk ? 1 : 0,
    payload_on_disk: body.payload_on_disk ? 1 : 0,
    q_kind: kind,
    q_quantile: q.quantile?.trim() ?? null,
    q_always_ram: q.always_ram ? 1 : 0,
    shards,
    replicas,
    message: null,
    points_count: 0,
    vectors_count: 0,
    segments_count: 0,
    counts_at: null,
  };
}

function checkReplicas(replicas: number) {
  if (!(Number.isInteger(replicas) && replicas >= L.replicasMin && replicas <= L.replicasMax)) {
    throw badRequest(`replicas must be an integer between ${L.replicasMin} and ${L.replicasMax}; got ${replicas}`);
  }
}

/** Finds an index of a project; a malformed name is the same 404 as a missing one. */
export function requireIndex(rt: VectorRuntime, access: ProjectAccess, name: string): IndexRow {
  const row = isValidIndexName(name) ? rt.store.findIndex(access.project.id, name) : undefined;
  if (!row) throw notFound(`index "${name}" not found`);
  return row;
}

export function createIndex(ctx: AreaContext, rt: VectorRuntime, access: ProjectAccess, principal: Principal, body: CreateIndexBody, requestId: string): IndexView {
  const fields = validateCreate(body, ctx.config.vector.defaultDimensions);
  const row: IndexRow = { id: newId(), project_id: access.project.id, created_at: isoNow(ctx.clock), state: 'pending', ...fields };
  tx(ctx.db, () => {
    if (rt.store.findIndex(access.project.id, row.name)) throw conflict(`index "${row.name}" already exists in this project`);
    rt.store.insertIndex(row);
    writeAudit(ctx.db, ctx.clock, {
      projectId: access.project.id,
      actor: actorName(principal),
      action: 'index.create',
      target: row.name,
      details: { dimensions: row.dimensions, distance: row.distance, quantization: row.q_kind },
      requestId,
    });
  });
  rt.scheduleReady(row.id);
  return indexView(row, access.project, rt);
}

export function listIndexes(ctx: AreaContext, rt: VectorRuntime, access: ProjectAccess, query: PageQuery) {
  const page = ctx.pager.parse(query, `indexes:${access.project.id}`);
  const rows = rt.store.listIndexes(access.project.id, page.offset, page.size + 1);
  const { items, next_page_token } = ctx.pager.slice(page, rows);
  return { indexes: items.map((r) => indexView(r, access.project, rt)), ...(next_page_token ? { next_page_token } : {}) };
}

/** PATCH: only replicas and payload_on_disk (spec 3 §4.1, §9). */
export function patchIndex(ctx: AreaContext, rt: VectorRuntime, access: ProjectAccess, principal: Principal, name: string, body: PatchIndexBody, requestId: string): IndexView {
  const row = requireIndex(rt, access, name);
  const immutable = IMMUTABLE_INDEX_FIELDS.filter((f) => body[f] !== undefined);
  if (immutable.length) {
    throw badRequest(`${immutable.join(', ')} ${immutable.length > 1 ? 'are' : 'is'} immutable; create a new index to change ${immutable.length > 1 ? 'them' : 'it'}`);
  }
  if (body.replicas === undefined && body.payload_on_disk === undefined) {
    throw badRequest(`empty patch: editable fields are ${EDITABLE_INDEX_FIELDS.join(', ')}`);
  }
  if (body.replicas !== undefined) checkReplicas(body.replicas);
  const changes: Partial<IndexRow> = {};
  if (body.replicas !== undefined) changes.replicas = body.replicas;
  if (body.payload_on_disk !== undefined) changes.payload_on_disk = body.payload_on_disk ? 1 : 0;
  tx(ctx.db, () => {
    rt.store.updateIndex(row.id, changes);
    writeAudit(ctx.db, ctx.clock, { projectId: access.project.id, actor: actorName(principal), action: 'index.update', target: name, details: body, requestId });
  });
  const updated = rt.store.indexById(row.id)!;
  if (body.payload_on_disk !== undefined && updated.state === 'ready') rt.engine(updated).setPayloadOnDisk(body.payload_on_disk);
  return indexView(updated, access.project, rt);
}

export function deleteIndex(ctx: AreaContext, rt: VectorRuntime, access: ProjectAccess, principal: Principal, name: string, requestId: string): void {
  dropIndex(ctx, rt, requireIndex(rt, access, name), actorName(principal), requestId);
}

/** Deletes an index, its points and its engine, audited under `actor` (a person, key or direct token). */
export function dropIndex(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, actor: string, requestId: string): void {
  rt.settleWrites();
  tx(ctx.db, () => {
    rt.store.deleteIndex(row.id);
    writeAudit(ctx.db, ctx.clock, { projectId: row.project_id, actor, action: 'index.delete', target: row.name, requestId });
  });
  rt.drop(row.id);
}

import { expect } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';

export const topicsPath = (p: string) => `/v1/projects/${p}/topics`;
export const topicPath = (p: string, t: string) => `${topicsPath(p)}/${t}`;
export const subsPath = (p: string, t: string) => `${topicPath(p, t)}/subscriptions`;
export const subPath = (p: string, t: string, s: string) => `${subsPath(p, t)}/${s}`;

/** Polls a resource until ready: creation answers pending and the broker converges just after. */
export async function untilReady(d: TestDaemon, token: string, path: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const r = await d.api('GET', path, { token });
    if (r.status === 200 && r.body.ready) return r.body;
    await new Promise((res) => setTimeout(res, 5));
  }
  throw new Error(`${path} never became ready`);
}

export async function makeTopic(d: TestDaemon, token: string, project: string, name: string, body: Record<string, unknown> = {}) {
  const r = await d.api('POST', topicsPath(project), { token, body: { name, ...body } });
  expect(r.status, r.text).toBe(201);
  return untilReady(d, token, topicPath(project, name));
}

export async function makeSub(d: TestDaemon, token: string, project: string, topic: string, name: string, body: Record<string, unknown> = {}) {
  const r = await d.api('POST', subsPath(project, topic), { token, body: { name, ...body } });
  expect(r.status, r.text).toBe(201);
  return untilReady(d, token, subPath(project, topic, name));
}

export async function publish(d: TestDaemon, token: string, project: string, topic: string, messages: unknown[]) {
  return d.api('POST', `${topicPath(project, topic)}:publish`, { token, body: { messages } });
}

export async function pull(d: TestDaemon, token: string, project: string, topic: string, sub: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return d.api('POST', `${subPath(project, topic, sub)}:pull`, { token, body: { timeout_ms: 0, ...body }, headers });
}

export async function ack(d: TestDaemon, token: string, project: string, topic: string, sub: string, ids: string[]) {
  return d.api('POST', `${subPath(project, topic, sub)}:acknowledge`, { token, body: { ack_ids: ids } });
}

export const text = (m: { data: string }) => Buffer.from(m.data, 'base64').toString('utf8');

import type { MessageRow, SubRow, TopicRow } from './store.js';
import { subscriptionPath, topicAddress } from './paths.js';

export const CE_TYPE = 'ai.platform.pubsub.message.v1';

/** Header-safe attribute name: lowercase (HTTP names are case-insensitive), other bytes percent-encoded. */
function headerName(name: string): string {
  if (/^[a-z0-9_.-]*$/.test(name)) return name; // the common case, without a byte walk
  return Array.from(Buffer.from(name.toLowerCase(), 'utf8'))
    .map((b) => (/[a-z0-9_.-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/** CloudEvents HTTP binding: header values outside printable ASCII, '"' and '%' are percent-encoded. */
function headerValue(value: string): string {
  if (/^[\x20\x21\x23\x24\x26-\x7e]*$/.test(value)) return value;
  return Array.from(Buffer.from(value, 'utf8'))
    .map((b) => (b >= 0x20 && b <= 0x7e && b !== 0x22 && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

export interface PushRequest {
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Builds the CloudEvent for one push delivery (spec 3 §6). Binary mode: the payload is the body
 * and metadata rides in ce-* headers, attributes as ce-attr-<name>. Structured mode: one JSON
 * envelope with the same attributes (attributes as attr-<name> keys, named exactly as binary mode
 * names them: CloudEvents attribute names are lowercase) and the payload as data (parsed JSON
 * when labelled application/json, text for text/*) or data_base64 otherwise.
 */
export function buildPushRequest(sub: SubRow, topic: TopicRow, m: MessageRow, attempt: number): PushRequest {
  const attributes = m.attributes ? (JSON.parse(m.attributes) as Record<string, string>) : {};
  const id = `${m.ledger}:${m.entry}`;
  const meta = {
    specversion: '1.0',
    type: CE_TYPE,
    id,
    source: topicAddress(topic.short, topic.name),
    subject: m.key || id,
    time: new Date(m.publish_time).toISOString(),
    subscription: subscriptionPath(topic.short, topic.name, sub.name),
  };
  const contentType = attributes.datacontenttype || 'application/octet-stream';
  if (sub.content_mode === 'cloudevents-binary') {
    const headers: Record<string, string> = { 'content-type': contentType };
    for (const [k, v] of Object.entries(meta)) headers[`ce-${k}`] = headerValue(v);
    headers['ce-deliveryattempt'] = String(attempt);
    for (const [k, v] of Object.entries(attributes)) headers[`ce-attr-${headerName(k)}`] = headerValue(v);
    return { headers, body: m.data };
  }
  const envelope: Record<string, unknown> = { ...meta, deliveryattempt: attempt, datacontenttype: contentType };
  for (const [k, v] of Object.entries(attributes)) envelope[`attr-${headerName(k)}`] = v;
  const text = m.data.toString('utf8');
  const validText = Buffer.from(text, 'utf8').equals(m.data);
  if (/^application\/(.+\+)?json\b/i.test(contentType) && validText && isJson(text)) envelope.data = JSON.parse(text);
  else if (/^text\//i.test(contentType) && validText) envelope.data = text;
  else envelope.data_base64 = m.data.toString('base64');
  return {
    headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' },
    body: Buffer.from(JSON.stringify(envelope)),
  };
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

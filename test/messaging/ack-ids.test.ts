import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeAckId, encodeAckId, parseAckIds } from '../../src/daemon/services/messaging/ack.js';
import type { SubRow } from '../../src/daemon/services/messaging/store.js';

const b64 = (s: string) => Buffer.from(s).toString('base64url');

describe('ack ids (hand-parsed on the acknowledge path)', () => {
  it('round-trip any subscription, sequence and attempt', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat({ max: 10_000 }), (subId, seq, attempt) => {
        const id = encodeAckId(subId, seq, attempt);
        // The hand encoder writes exactly what Buffer's base64url did (ids issued before still match).
        expect(id).toBe(Buffer.from(`${subId}.${seq}.${attempt}`).toString('base64url'));
        expect(decodeAckId(id)).toEqual({ subId, seq, attempt });
      }),
    );
  });

  it('refuse anything that is not base64url of <sub>.<seq>.<attempt>', () => {
    for (const bad of ['', 'not*base64', 'x'.repeat(65), b64('1.2'), b64('1.2.3.4'), b64('.1.2'), b64('1..2'), b64('1.2.'), b64('a.1.2'), b64('1.2.3x'), b64('1.2.3\n'), b64('١.2.3'), b64('1234567890123456.1.1')]) {
      expect(decodeAckId(bad), bad).toBeUndefined();
    }
  });

  it('parseAckIds returns sequence numbers in order and refuses the whole list for one foreign id (400)', () => {
    const sub = { id: 7 } as SubRow;
    expect(parseAckIds(sub, [encodeAckId(7, 30, 1), encodeAckId(7, 10, 2)])).toEqual([30, 10]);
    expect(() => parseAckIds(sub, [encodeAckId(7, 30, 1), encodeAckId(8, 31, 1)])).toThrow(/ack_ids invalid for this subscription/);
    expect(() => parseAckIds(sub, ['garbage!'])).toThrow(/ack_ids invalid/);
  });
});

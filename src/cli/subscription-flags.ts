import { Flags } from '@oclif/core';
import type { z } from 'zod';
import type { SubscriptionPatch } from '../api/messaging.js';

/** Flags shared by `subscriptions create` and `subscriptions update` (the patchable fields). */
export const editableSubFlags = {
  'display-name': Flags.string({ description: 'free text' }),
  'ack-deadline': Flags.integer({ description: 'seconds to acknowledge (1-600); also the push request timeout', min: 1, max: 600 }),
  'max-deliver': Flags.integer({ description: 'push attempts before a message is dropped (no dead-letter topic)', min: 0 }),
  'max-ack-pending': Flags.integer({ description: 'unacknowledged messages in flight', min: 1 }),
  'push-url': Flags.string({ description: 'deliver by push to this workload url (http://...)' }),
  'content-mode': Flags.string({ description: 'push CloudEvents mode', options: ['cloudevents-structured', 'cloudevents-binary'] }),
  'dead-letter-topic': Flags.string({ description: 'topic that receives messages push could not deliver' }),
  'dead-letter-after': Flags.integer({ description: 'push attempts before dead-lettering (default 5)', min: 1 }),
};

type Editable = { [K in keyof typeof editableSubFlags]?: string | number };

/** Turns the editable flags into the API's body fields (omitted flags stay omitted). */
export function editableSubBody(f: Editable, pull = false): z.input<typeof SubscriptionPatch> {
  const body: z.input<typeof SubscriptionPatch> = {
    display_name: f['display-name'] as string | undefined,
    ack_deadline_seconds: f['ack-deadline'] as number | undefined,
    max_deliver: f['max-deliver'] as number | undefined,
    max_ack_pending: f['max-ack-pending'] as number | undefined,
  };
  if (f['push-url']) {
    body.deliver = { mode: 'push', push: { url: f['push-url'] as string, content_mode: f['content-mode'] as 'cloudevents-structured' | undefined } };
  } else if (pull) {
    body.deliver = { mode: 'pull' };
  }
  if (f['dead-letter-topic'] !== undefined || f['dead-letter-after'] !== undefined) {
    body.dead_letter = { topic: f['dead-letter-topic'] as string | undefined, after_attempts: f['dead-letter-after'] as number | undefined };
  }
  return body;
}

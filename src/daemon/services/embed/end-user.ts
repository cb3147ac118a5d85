import { createHash } from 'node:crypto';
import { END_USER_RE, WIDGET_USER_PREFIX } from '../../../api/embed.js';
import type { EndUserOf } from '../../area.js';
import { badRequest } from '../../http/errors.js';

/**
 * The session owner of a widget end user: a digest of the secret the widget keeps in localStorage,
 * scoped to the agent so one browser is not linkable across agents. The secret itself is never
 * stored, so the owner's views (sessions, users) show an id that cannot be replayed to the widget.
 */
export function widgetUserId(agentId: string, endUser: string): string {
  return WIDGET_USER_PREFIX + createHash('sha256').update(`${agentId}\0${endUser}`).digest('base64url').slice(0, 22);
}

/** The widget invoke's caller: end_user is required and user_id refused (the page cannot choose it). */
export function endUserOf(agentId: string): EndUserOf {
  return (body) => {
    if ('user_id' in body) throw badRequest("user_id: the widget's caller is named by end_user; the platform derives the session owner from it");
    const endUser = body.end_user;
    if (typeof endUser !== 'string' || !END_USER_RE.test(endUser)) {
      throw badRequest("end_user is required: the widget's end-user id (24 to 128 letters, digits, _ or -), which widget.js keeps in localStorage");
    }
    return widgetUserId(agentId, endUser);
  };
}

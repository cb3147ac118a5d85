import { Uuid } from '../../../api/common.js';

/** Path ids that must be UUIDs (orgID) or may be either a UUID or another handle (userID). */
export const isUuid = (s: string) => Uuid.safeParse(s).success;

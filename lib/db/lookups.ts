import { type Read, readTogether } from './batch-read.ts';
import type { TeamItem, UserItem } from './items.ts';
import type { Db } from './service.ts';

export interface Hydrated {
  teams: Map<number, TeamItem>;
  users: Map<string, UserItem>;
}

/** Fills in a page: the teams and users it names, in one BatchGetItem (per 100 keys). */
export const hydrate = async (
  db: Db,
  { teamIds = [], userUuids = [] }: { teamIds?: number[]; userUuids?: string[] },
): Promise<Hydrated> => {
  const teamKeys = [...new Set(teamIds)];
  const userKeys = [...new Set(userUuids)];
  const reads: Read[] = [
    ...teamKeys.map((teamId) => [db.entities.team, { teamId }] as const),
    ...userKeys.map((userUuid) => [db.entities.user, { userUuid }] as const),
  ];
  const found = await readTogether(db, reads);
  const teams = new Map<number, TeamItem>();
  const users = new Map<string, UserItem>();
  found.forEach((item, i) => {
    if (!item) return;
    if (i < teamKeys.length) teams.set(teamKeys[i] as number, item as TeamItem);
    else users.set(userKeys[i - teamKeys.length] as string, item as UserItem);
  });
  return { teams, users };
};

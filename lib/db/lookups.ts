import type { TeamItem, UserItem } from '../views.ts';
import { untilProcessed } from './pages.ts';
import type { Db } from './service.ts';

/** Fills in a page: one BatchGetItem (per 100 keys) for the teams it names, by id. */
export const teamsById = async (db: Db, teamIds: number[]): Promise<Map<number, TeamItem>> => {
  const teams = await untilProcessed(
    [...new Set(teamIds)].map((teamId) => ({ teamId })),
    (keys) => db.entities.team.get(keys).go(),
  );
  return new Map(teams.map((t) => [t.teamId, t]));
};

/** Fills in a page: one BatchGetItem (per 100 keys) for the users it names, by UUID. */
export const usersByUuid = async (db: Db, uuids: string[]): Promise<Map<string, UserItem>> => {
  const users = await untilProcessed(
    [...new Set(uuids)].map((userUuid) => ({ userUuid })),
    (keys) => db.entities.user.get(keys).go(),
  );
  return new Map(users.map((u) => [u.userUuid, u]));
};

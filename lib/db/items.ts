import type { EntityItem } from 'electrodb';
import type { domainOwner, joinRequest, teamDomain } from './entities/domains.ts';
import type { factor, mfaChallenge } from './entities/factors.ts';
import type { invite } from './entities/invites.ts';
import type { membership, team } from './entities/teams.ts';
import type { user } from './entities/users.ts';

/** The stored items the use cases pass around, as ElectroDB types them from the entities. */
export type TeamItem = EntityItem<ReturnType<typeof team>>;
export type MembershipItem = EntityItem<ReturnType<typeof membership>>;
export type InviteItem = EntityItem<ReturnType<typeof invite>>;
export type UserItem = EntityItem<ReturnType<typeof user>>;
export type FactorItem = EntityItem<ReturnType<typeof factor>>;
export type MfaChallengeItem = EntityItem<ReturnType<typeof mfaChallenge>>;
export type TeamDomainItem = EntityItem<ReturnType<typeof teamDomain>>;
export type DomainOwnerItem = EntityItem<ReturnType<typeof domainOwner>>;
export type JoinRequestItem = EntityItem<ReturnType<typeof joinRequest>>;

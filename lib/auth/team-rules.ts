/**
 * CONTRACT.md "Who may do what", as data and pure predicates. No role check lives anywhere else;
 * "not a member" (404) is decided before these run, by requireMember().
 */
import type { Role } from '#lib/db/entities/roles.ts';

const MANAGERS: readonly Role[] = ['OWNER', 'ADMIN'];
/** The roles an ADMIN may act on and hand out; OWNER is reserved to owners. */
const BELOW_OWNER: readonly Role[] = ['ADMIN', 'MEMBER'];

export const canUpdateTeam = (actor: Role): boolean => MANAGERS.includes(actor);

export const canDeleteTeam = (actor: Role): boolean => actor === 'OWNER';

/** Whether the team requires MFA of its members (docs/mfa.md). */
export const canSetTeamPolicy = (actor: Role): boolean => actor === 'OWNER';

/** List, read, create and delete a team's invites. */
export const canManageInvites = (actor: Role): boolean => MANAGERS.includes(actor);

export const canInviteAs = (actor: Role, role: Role): boolean => actor === 'OWNER' || (actor === 'ADMIN' && BELOW_OWNER.includes(role));

export const canChangeRole = (actor: Role, target: Role, to: Role): boolean =>
  actor === 'OWNER' || (actor === 'ADMIN' && BELOW_OWNER.includes(target) && BELOW_OWNER.includes(to));

/** Read the team's audit log. */
export const canReadAudit = (actor: Role): boolean => MANAGERS.includes(actor);

/** Add, verify, change and remove the team's domains (docs/domains.md): they let strangers in, so owners only. */
export const canManageDomains = (actor: Role): boolean => actor === 'OWNER';

/** See the team's domains and answer requests to join. */
export const canReadDomains = (actor: Role): boolean => MANAGERS.includes(actor);

export const canRemoveMember = (actor: Role, target: Role, isSelf: boolean): boolean =>
  actor === 'OWNER' || (actor === 'ADMIN' && BELOW_OWNER.includes(target)) || (actor === 'MEMBER' && isSelf);

import { describe, expect, it } from 'vitest';
import { canChangeRole, canDeleteTeam, canInviteAs, canManageInvites, canRemoveMember, canUpdateTeam } from '#lib/auth/team-rules.ts';
import { ROLES, type Role } from '#lib/db/entities/roles.ts';

/** CONTRACT.md "Who may do what", restated as the expected answer for every combination. */
describe('permission rules', () => {
  it.each(ROLES)('%s: update team, delete team, manage invites', (actor) => {
    expect(canUpdateTeam(actor)).toBe(actor !== 'MEMBER');
    expect(canDeleteTeam(actor)).toBe(actor === 'OWNER');
    expect(canManageInvites(actor)).toBe(actor !== 'MEMBER');
  });

  const all = ROLES.flatMap((a) => ROLES.map((b) => [a, b] as [Role, Role]));

  it.each(all)('%s invites as %s', (actor, role) => {
    const expected = actor === 'OWNER' || (actor === 'ADMIN' && role !== 'OWNER');
    expect(canInviteAs(actor, role)).toBe(expected);
  });

  it.each(all.flatMap(([a, t]) => ROLES.map((to) => [a, t, to] as [Role, Role, Role])))('%s changes a %s to %s', (actor, target, to) => {
    const expected = actor === 'OWNER' || (actor === 'ADMIN' && target !== 'OWNER' && to !== 'OWNER');
    expect(canChangeRole(actor, target, to)).toBe(expected);
  });

  it.each(all.flatMap(([a, t]) => [true, false].map((self) => [a, t, self] as [Role, Role, boolean])))(
    '%s removes a %s (self: %s)',
    (actor, target, self) => {
      const expected = actor === 'OWNER' || (actor === 'ADMIN' && target !== 'OWNER') || (actor === 'MEMBER' && self);
      expect(canRemoveMember(actor, target, self)).toBe(expected);
    },
  );
});

import type { InviteItem, MembershipItem, TeamItem, UserItem } from '#lib/db/items.ts';
import type { Factor } from './mfa.ts';
import type { Identity, Invite, Member, Membership, Team, User } from './responses.ts';

/**
 * Stored items -> the wire JSON of CONTRACT.md, typed by the response schemas (responses.ts) that
 * the OpenAPI document is made of. Only these fields ever leave the service.
 */

export const teamView = (t: TeamItem): Team => ({
  id: t.teamId,
  name: t.name,
  slug: t.slug,
  logo: t.logo ?? null,
  requireMfa: t.requireMfa === true,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});

/** The membership record that a role update returns. */
export const membershipView = (m: MembershipItem): Membership => ({
  id: m.memberId,
  teamId: m.teamId,
  userId: m.userId,
  role: m.role,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
});

/** A member as listed for a team: the membership with its user's name and e-mail. */
export const memberView = (m: MembershipItem, u: UserItem): Member => ({
  id: m.memberId,
  userId: m.userId,
  role: m.role,
  email: u.email,
  firstName: u.firstName,
  lastName: u.lastName,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
});

export const factorView = (f: NonNullable<UserItem['factors']>[number]): Factor => ({
  id: f.id,
  friendly_name: f.name,
  factor_type: f.type,
  status: f.status,
  created_at: f.createdAt,
  updated_at: f.updatedAt,
});

/** Whether the account has a password (one made by a provider sign-in has none until it sets one). */
export const hasPassword = (u: UserItem): boolean => u.passwordHash !== '';

/** The password's identity (`email`), as GoTrue lists it: its ids are the user's. */
export const passwordIdentity = (
  u: Pick<User, 'id' | 'email' | 'email_confirmed_at' | 'created_at' | 'last_sign_in_at' | 'updated_at'>,
): Identity => ({
  identity_id: u.id,
  id: u.id,
  user_id: u.id,
  provider: 'email',
  email: u.email,
  identity_data: { sub: u.id, email: u.email, email_verified: u.email_confirmed_at !== null },
  created_at: u.created_at,
  last_sign_in_at: u.last_sign_in_at,
  updated_at: u.updated_at,
});

/** The account's ways in, GoTrue's identities: the password's (`email`) while there is one, then each provider's. */
export const identitiesView = (u: UserItem): Identity[] => [
  ...(hasPassword(u)
    ? [
        passwordIdentity({
          id: u.userUuid,
          email: u.email,
          email_confirmed_at: u.emailConfirmedAt ?? null,
          created_at: u.createdAt,
          last_sign_in_at: u.lastSignInAt ?? null,
          updated_at: u.updatedAt,
        }),
      ]
    : []),
  ...(u.identities ?? []).map((i) => ({
    identity_id: i.id,
    id: i.subject,
    user_id: u.userUuid,
    provider: i.provider,
    email: i.email,
    identity_data: { sub: i.subject, email: i.email, email_verified: true },
    created_at: i.createdAt,
    last_sign_in_at: i.lastSignInAt,
    updated_at: i.lastSignInAt,
  })),
];

export const userView = (u: UserItem): User => ({
  id: u.userUuid,
  aud: 'authenticated',
  role: 'authenticated',
  email: u.email,
  email_confirmed_at: u.emailConfirmedAt ?? null,
  confirmed_at: u.emailConfirmedAt ?? null,
  ...(u.newEmail !== undefined ? { new_email: u.newEmail } : {}),
  last_sign_in_at: u.lastSignInAt ?? null,
  app_metadata: {
    provider: u.signUpProvider ?? 'email',
    providers: [...new Set([...(hasPassword(u) ? ['email'] : []), ...(u.identities ?? []).map((i) => i.provider)])],
  },
  user_metadata: { ...(u.metadata as Record<string, unknown> | undefined), firstName: u.firstName, lastName: u.lastName },
  ...(u.factors?.length ? { factors: u.factors.map(factorView) } : {}),
  ...(u.identities?.length ? { identities: identitiesView(u) } : {}),
  created_at: u.createdAt,
  updated_at: u.updatedAt,
});

/** The inviter as shown on an invite; null once that account no longer exists. */
const inviterView = (u: UserItem | undefined) =>
  u ? { id: u.userId, email: u.email, firstName: u.firstName, lastName: u.lastName } : null;

export const inviteView = (i: InviteItem, t: TeamItem, inviter: UserItem | undefined): Invite => ({
  id: i.inviteId,
  uuid: i.inviteUuid,
  teamId: i.teamId,
  team: { id: t.teamId, name: t.name, slug: t.slug },
  email: i.email,
  role: i.role,
  // EXPIRED is stored only: a pending invite past its expiry that the sweeper took out of the lists.
  status: i.status === 'EXPIRED' ? 'PENDING' : i.status,
  invitedBy: inviterView(inviter),
  expiresAt: i.expiresAt,
  createdAt: i.createdAt,
  updatedAt: i.updatedAt,
});

export type { Invite as InviteView, Member as MemberView, Team as TeamView, User as UserView } from './responses.ts';

/** A member's role in a team, strongest first: stored on memberships, invites and transfers (lib/auth/team-rules.ts says what each may do). */
export const ROLES = ['OWNER', 'ADMIN', 'MEMBER'] as const;
export type Role = (typeof ROLES)[number];

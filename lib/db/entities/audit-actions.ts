/** Every action the audit log records (docs/audit.md): `<what>.<verb>`, as webhooks name their events. */
export const AUDIT_ACTIONS = [
  'team.created',
  'team.updated',
  'team.deleted',
  'member.role_changed',
  'member.removed',
  'member.left',
  'invite.created',
  'invite.resent',
  'invite.deleted',
  'invite.accepted',
  'invite.declined',
  'mail.blocked',
  'transfer.created',
  'transfer.accepted',
  'transfer.declined',
  'transfer.canceled',
  'webhook.created',
  'webhook.deleted',
  'team.mfa_policy_changed',
  'domain.added',
  'domain.verified',
  'domain.updated',
  'domain.lapsed',
  'domain.removed',
  'member.joined',
  'join.requested',
  'join.declined',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGETS = ['team', 'member', 'invite', 'transfer', 'webhook', 'domain', 'user'] as const;

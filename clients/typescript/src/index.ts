export { RosterClient, type RosterClientOptions } from './client.js';
export { RosterError, RosterNetworkError } from './errors.js';
export type {
  AuditAction,
  AuditEntry,
  AuditQuery,
  BulkInviteResult,
  ErrorCode,
  Invite,
  Jwks,
  Member,
  Membership,
  Page,
  PageQuery,
  Role,
  Session,
  SessionInfo,
  Team,
  Transfer,
  User,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookReplay,
  WriteOptions,
} from './types.js';
export type { components, operations, paths } from './schema.js';

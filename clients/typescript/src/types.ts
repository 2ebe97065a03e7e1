import type { components, operations } from './schema.js';

type Schemas = components['schemas'];

export type Team = Schemas['Team'];
export type Member = Schemas['Member'];
export type Membership = Schemas['Membership'];
export type Invite = Schemas['Invite'];
export type User = Schemas['User'];
export type SessionInfo = Schemas['SessionInfo'];
export type Jwks = Schemas['Jwks'];
/** One row's answer in a bulk invite: 201 with the `invite`, or the error that row got. */
export type BulkInviteResult = Schemas['BulkInviteResult'];
export type Transfer = Schemas['Transfer'];
export type AuditEntry = Schemas['AuditEntry'];
/** What an audit entry records, the `action` filter of the log, and what a webhook subscribes to. */
export type AuditAction = AuditEntry['action'];
/** A webhook endpoint as listed: without its secret. */
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
/** A webhook endpoint just registered, with its signing `secret` (`whsec_…`), shown this once. */
export type WebhookEndpointCreated = Schemas['WebhookEndpointCreated'];
/** One attempt to deliver an event to a webhook endpoint, as its delivery log shows it. */
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** A replay queued: the `eventId` (the message's `webhook-id`) that will be sent again. */
export type WebhookReplay = Schemas['WebhookReplay'];
/** What sign-up, sign-in and refresh answer: the tokens and the user. */
export type Session = Schemas['AuthSession']['session'];
export type Role = Member['role'];

/** Every `error.code` the API documents, collected from the error schemas. */
export type ErrorCode = {
  [K in keyof Schemas]: Schemas[K] extends { error: { code: infer C } } ? C : never;
}[keyof Schemas];

type OperationId = keyof operations;
/** The JSON body an operation takes. */
export type BodyOf<K extends OperationId> = NonNullable<operations[K]['requestBody']>['content'] extends { 'application/json': infer B }
  ? B
  : never;
/** The query parameters an operation takes. */
export type QueryOf<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;

/** One page of a list; `next` is the cursor of the following page, or null on the last one. */
export interface Page<T> {
  data: T[];
  next: string | null;
}
/** `limit` and `cursor`, shared by every list. */
export type PageQuery = QueryOf<'teams-list'>;
/** A page of the audit log, and `action` to keep one kind of entry (kept on every page). */
export type AuditQuery = QueryOf<'audit-list'>;

/** Options of the signed-in POSTs. */
export interface WriteOptions {
  /**
   * Sent as `Idempotency-Key` (1 to 255 printable ASCII characters; a UUID, say). Sending the same
   * request again with the same key within 24 hours gets the first answer back and does nothing
   * twice: use one key per intended action, and the same key for its retries.
   */
  idempotencyKey?: string;
}

/** The `Idempotency-Key` header parameter, when a key is given. */
export const idempotencyHeader = ({ idempotencyKey }: WriteOptions = {}): { header?: { 'Idempotency-Key': string } } =>
  idempotencyKey === undefined ? {} : { header: { 'Idempotency-Key': idempotencyKey } };

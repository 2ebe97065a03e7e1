import type { components, operations } from './schema.js';

type Schemas = components['schemas'];

export type Team = Schemas['Team'];
export type Member = Schemas['Member'];
export type Membership = Schemas['Membership'];
export type Invite = Schemas['Invite'];
export type User = Schemas['User'];
export type SessionInfo = Schemas['SessionInfo'];
export type Jwks = Schemas['Jwks'];
/** What sign-up, sign-in and refresh answer: the tokens and the user. */
export type Session = Schemas['AuthSession']['session'];
export type Role = Member['role'];

/** Every `error.code` the API documents, collected from the error schemas. */
export type ErrorCode = {
  [K in keyof Schemas]: Schemas[K] extends { error: { code: infer C } } ? C : never;
}[keyof Schemas];

type OperationId = keyof operations;
/** The JSON body an operation takes. */
export type BodyOf<K extends OperationId> = NonNullable<operations[K]['requestBody']>['content']['application/json'];
/** The query parameters an operation takes. */
export type QueryOf<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;

/** One page of a list; `next` is the cursor of the following page, or null on the last one. */
export interface Page<T> {
  data: T[];
  next: string | null;
}
/** `limit` and `cursor`, shared by every list. */
export type PageQuery = QueryOf<'teams-list'>;

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

/**
 * What an app keeps about its user beside the names (GoTrue's user_metadata, docs/supabase.md): a
 * flat JSON object, small, so that a user item stays far below DynamoDB's 400 KB. The bound holds
 * for each request's `data` (lib/wire/gotrue.ts) and for what is kept once merged (lib/identity/account.ts).
 */
export const MAX_METADATA_KEYS = 20;
export const MAX_METADATA_BYTES = 2048;

export const withinMetadataBounds = (data: Record<string, unknown>): boolean =>
  Object.keys(data).length <= MAX_METADATA_KEYS && Buffer.byteLength(JSON.stringify(data)) <= MAX_METADATA_BYTES;

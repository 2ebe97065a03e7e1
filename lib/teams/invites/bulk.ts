import type { Claims } from '#lib/auth/session-items.ts';
import { AppError } from '#lib/core/errors.ts';
import { currentRequest } from '#lib/core/log.ts';
import type { Db } from '#lib/db/service.ts';
import { appErrorOf } from '#lib/http/errors.ts';
import { validate } from '#lib/http/validation.ts';
import type { BulkInviteResult } from '#lib/wire/responses.ts';
import { InviteBody, type InviteInput } from '#lib/wire/schemas.ts';
import { inviteView } from '#lib/wire/views.ts';
import { type InviteOutcome, type Inviter, inviteEach, inviterOf } from './create.ts';

type Refused = Extract<BulkInviteResult, { code: string }>;

/**
 * Time a row may take, its conflict retries included, plus the answer's own: no row starts with
 * less left before the function's timeout, so the 200 with every row's result always goes out.
 */
const ROW_RESERVE_MS = 2_500;

/** Rows worth sending again as they are (a 5xx, or a `conflict`): such an answer is not kept under an Idempotency-Key. */
export const hasRetryableRows = (results: readonly BulkInviteResult[]): boolean =>
  results.some((r) => r.status >= 500 || ('code' in r && r.code === 'conflict'));

/** A row as the single invite takes its body: an object, then InviteBody's rules. Throws what that answers. */
const parseRow = (row: unknown): InviteInput => {
  if (row === null || typeof row !== 'object' || Array.isArray(row))
    throw new AppError('invalid_body', 'Each invite must be a JSON object.');
  return validate(InviteBody, row);
};

/** A later row with the address of row `first` (after normalising): only the first is invited. */
const repeats = (first: number): AppError =>
  new AppError('validation_failed', `This address is already in invites[${first}]: each address is invited once per request.`, {
    fields: { email: `repeats invites[${first}]` },
  });

/** What a row that could not be parsed says it was for: its `email` as sent, if a string. */
const emailAsSent = (row: unknown): string | null => {
  const email = row !== null && typeof row === 'object' ? (row as { email?: unknown }).email : undefined;
  return typeof email === 'string' ? email : null;
};

const refused = (email: string | null, error: AppError): Refused => ({
  email,
  // A row fails only with the codes of the single invite's body and use case (lib/wire/responses.ts lists
  // them; the HTTP suite checks every answer against the document).
  status: error.status as Refused['status'],
  code: error.code as Refused['code'],
  message: error.message,
  ...(error.fields ? { fields: error.fields } : {}),
});

const resultOf = (inviter: Inviter, email: string, outcome: InviteOutcome, requestId: string): BulkInviteResult =>
  'invite' in outcome
    ? { email, status: 201, invite: inviteView(outcome.invite, inviter.team, inviter.sender) }
    : refused(email, appErrorOf(outcome.error, requestId));

/**
 * Invites up to 100 addresses, each row on its own with the single invite's rules and answer
 * (lib/teams/invites/create.ts): the caller's session, the team, their membership and user item are read once
 * (inviterOf: 404 or 403 for the whole request), then every row that parses, in its own
 * transaction, with the mail allowances charged row by row (inviteEach). A row whose address
 * (trimmed, lowercased) repeats an earlier row's is refused (422); so is one that does not parse,
 * with the status its body would get alone (400 or 422). One result per row, in order.
 */
export const bulkInvite = async (
  db: Db,
  claims: Claims,
  slug: string,
  rows: readonly unknown[],
  now: Date,
  remainingMs: () => number,
): Promise<BulkInviteResult[]> => {
  const firstRow = new Map<string, number>();
  const parsed = rows.map((row, n): { input: InviteInput } | { email: string | null; error: unknown } => {
    let input: InviteInput;
    try {
      input = parseRow(row);
    } catch (error) {
      return { email: emailAsSent(row), error };
    }
    const first = firstRow.get(input.email);
    if (first !== undefined) return { email: input.email, error: repeats(first) };
    firstRow.set(input.email, n);
    return { input };
  });
  const inputs = parsed.flatMap((p) => ('input' in p ? [p.input] : []));
  const inviter = await inviterOf(
    db,
    claims,
    slug,
    inputs.map((i) => i.email),
  );
  // A row is started only with time for it and its retries left; the rest answer 503 (send them again).
  const outcomes = await inviteEach(db, inviter, inputs, now, () => remainingMs() > ROW_RESERVE_MS);
  const requestId = currentRequest()?.requestId ?? 'none';
  let next = 0;
  return parsed.map((p) =>
    'input' in p
      ? resultOf(inviter, p.input.email, outcomes[next++] as InviteOutcome, requestId)
      : refused(p.email, appErrorOf(p.error, requestId)),
  );
};

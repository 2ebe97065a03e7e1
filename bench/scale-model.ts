/**
 * The capacity model of docs/scale.md: for each route, the DynamoDB work of one call (measured by
 * the capacity part of `npm run bench`), the Lambda time of one call (the warm handler p50 of the
 * load part), the item or partition each route is bound by, and the rates those allow. The table
 * in docs/scale.md is this module's output for bench/results/latest.json: test/unit/scale.test.ts
 * fails when the two differ, when a route has no bound or no measurement, and
 * test/load/scale.test.ts fails when the code's units drift from the measured ones.
 */
import { FUNCTION_DEFAULTS, type RouteName } from '#lib/http/routes.ts';
import type { CapacityRow } from './capacity.ts';
import type { LoadRow } from './load.ts';

/** DynamoDB's and Lambda's limits the model divides by (AWS quotas as of 2026; docs/scale.md). */
export const LIMITS = {
  /** One partition, and so one item, serves at most this many read units a second. */
  partitionRcu: 3000,
  /** ...and this many write units a second. */
  partitionWcu: 1000,
  /** An on-demand table's default maximum throughput (a service quota AWS raises on request). */
  tableRcu: 40_000,
  tableWcu: 40_000,
  /** Lambda concurrency: the default account quota, and what new accounts may get. */
  accountConcurrency: 1000,
  newAccountConcurrency: 10,
} as const;

/**
 * List prices per call's parts (us-east-1, 2026, no free tier), for the cost of a million calls:
 * an HTTP API request, a Lambda request and its arm64 GB-seconds at the functions' memory, DynamoDB
 * on-demand read and write request units, and the request line's log ingestion (about 1 KB).
 */
export const PRICES = {
  apiRequest: 1.0 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000133334,
  readUnit: 0.125 / 1e6,
  writeUnit: 0.625 / 1e6,
  logGb: 0.5,
  logLineKb: 1,
} as const;

/** What a million calls cost, in dollars, at `ms` of Lambda time (billed by the millisecond) and the units of one call. */
export const costPerMillion = ({ rcu, wcu }: { rcu: number; wcu: number }, ms: number): number => {
  const gbSeconds = (Math.max(Math.ceil(ms), 1) / 1000) * (FUNCTION_DEFAULTS.memoryMb / 1024);
  const perCall =
    PRICES.apiRequest +
    PRICES.lambdaRequest +
    gbSeconds * PRICES.lambdaGbSecond +
    rcu * PRICES.readUnit +
    wcu * PRICES.writeUnit +
    (PRICES.logLineKb / 1024 / 1024) * PRICES.logGb;
  return perCall * 1e6;
};

/** The one key a route's calls concentrate on, and the units one call spends there. */
export interface Bound {
  /** What the key is, in words: it becomes the "bound by" column. */
  key: string;
  /** Whose key it is: the rate it allows is per this. */
  per: 'team' | 'user' | 'address' | 'session' | 'invite' | 'deployment' | 'nothing';
  /** Read units one call spends on that key (strongly consistent: 1 per 4 KB item; eventually: half). */
  rcu: number;
  /** Write units one call spends on that key (transactional items count twice). */
  wcu: number;
}

const none: Bound = { key: 'no table access', per: 'nothing', rcu: 0, wcu: 0 };

/**
 * Per route, its hottest key. Every authenticated call also reads its caller's session item (the
 * user's partition); that key is named where nothing hotter is touched.
 */
export const BOUNDS: Record<RouteName | 'fallback', Bound> = {
  'auth-signup': { key: 'sign-up bucket of the source address', per: 'address', rcu: 0, wcu: 1 },
  'auth-signin': { key: 'sign-in bucket of the source address (reserve, and refund on success)', per: 'address', rcu: 0, wcu: 2 },
  'auth-refresh': { key: "the user's partition (session and user read, session written)", per: 'user', rcu: 2, wcu: 2 },
  'auth-signout': { key: "the user's partition (the session)", per: 'user', rcu: 0, wcu: 1 },
  'auth-user': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'auth-user-update': { key: "the user's partition (user and session read, user written)", per: 'user', rcu: 2, wcu: 1 },
  'auth-user-delete': { key: "the user's partition (user and sessions read, then deleted)", per: 'user', rcu: 2, wcu: 2 },
  'auth-verify': { key: 'the user item (read, then written in the transaction with the token)', per: 'user', rcu: 1, wcu: 2 },
  'auth-verify-resend': { key: "the address's mail bucket (5 an hour by default)", per: 'address', rcu: 0, wcu: 1 },
  'auth-recover': { key: 'reset bucket of the source address', per: 'address', rcu: 0, wcu: 1 },
  'auth-reset': { key: "the user's partition (user written with the new session, other sessions ended)", per: 'user', rcu: 1, wcu: 3 },
  'auth-sessions-list': { key: "the user's partition (a page of sessions)", per: 'user', rcu: 2, wcu: 0 },
  'auth-sessions-delete': { key: "the user's partition (two sessions)", per: 'user', rcu: 1, wcu: 1 },
  'auth-factors-list': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'auth-factors-enrol': { key: "the user's partition (user read; user and factor written in a transaction)", per: 'user', rcu: 2, wcu: 2 },
  'auth-factors-rename': { key: "the user's partition (user read, then written in a transaction)", per: 'user', rcu: 2, wcu: 2 },
  'auth-factors-delete': { key: "the user's partition (user read; user and factor written in a transaction)", per: 'user', rcu: 2, wcu: 6 },
  'auth-factors-challenge': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'auth-factors-verify': {
    key: "the user's partition (user, factor and session read; factor and session written)",
    per: 'user',
    rcu: 3,
    wcu: 4,
  },
  'auth-passkeys-challenge': { key: 'sign-in bucket of the source address', per: 'address', rcu: 0, wcu: 1 },
  'auth-passkeys-sign-in': {
    key: "the user's partition (user and factor read; counter, user and session written in a transaction)",
    per: 'user',
    rcu: 2,
    wcu: 2,
  },
  'auth-recovery-codes-create': { key: "the user's partition (user and session read, codes written)", per: 'user', rcu: 2, wcu: 1 },
  'auth-recovery-codes-verify': {
    key: "the user's partition (user, codes and session read; codes and session written)",
    per: 'user',
    rcu: 3,
    wcu: 4,
  },
  // A team's domains (docs/domains.md): the team's partition; joins the joiner's.
  'teams-domains-list': { key: "the team's partition (team, membership, its domains)", per: 'team', rcu: 2, wcu: 0 },
  'teams-domains-create': { key: "the team item (its domain count) and the team's partition", per: 'team', rcu: 2, wcu: 2 },
  'teams-domains-update': { key: "the team's partition (the domain)", per: 'team', rcu: 2, wcu: 2 },
  'teams-domains-delete': { key: "the team item (its domain count) and the team's partition", per: 'team', rcu: 2, wcu: 2 },
  'teams-domains-verify': { key: "the domain's owner item and the team's partition", per: 'team', rcu: 2, wcu: 2 },
  'teams-joinable': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'teams-join': { key: "the team's partition (the new membership) and the domain's owner item", per: 'team', rcu: 2, wcu: 2 },
  'teams-join-requests': { key: "the team's partition (a page of requests)", per: 'team', rcu: 2, wcu: 0 },
  'teams-join-accept': { key: "the team's partition (the request and the new membership)", per: 'team', rcu: 2, wcu: 2 },
  'teams-join-decline': { key: "the team's partition (the request)", per: 'team', rcu: 2, wcu: 2 },
  // Provider sign-in (docs/sso.md): a flow item per start, a code per callback, both new keys each time.
  'auth-oauth-authorize': { key: 'a new flow item each time (no shared key)', per: 'nothing', rcu: 0, wcu: 1 },
  'auth-oauth-callback': { key: "the account's identity claim and user item (read), a new code item", per: 'user', rcu: 1, wcu: 1 },
  'auth-oauth-token': { key: "the user's partition (user read; user and session written in a transaction)", per: 'user', rcu: 1, wcu: 2 },
  'auth-identities-list': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'auth-identities-link': { key: "the user's partition (user and session read; a new flow item)", per: 'user', rcu: 2, wcu: 0 },
  'auth-identities-delete': {
    key: "the user's partition (user and session read; user and identity claim written in a transaction)",
    per: 'user',
    rcu: 2,
    wcu: 2,
  },
  jwks: { key: 'the public signing keys item, on a cold start only', per: 'deployment', rcu: 0, wcu: 0 },
  'openid-configuration': none,
  // The Supabase-compatible routes: the same use cases as their /api twins, so the same keys.
  'gotrue-signup': { key: 'sign-up bucket of the source address', per: 'address', rcu: 0, wcu: 1 },
  'gotrue-token': { key: 'sign-in bucket of the source address (reserve, and refund on success)', per: 'address', rcu: 0, wcu: 2 },
  'gotrue-user': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'gotrue-authorize': { key: 'a new flow item each time (no shared key)', per: 'nothing', rcu: 0, wcu: 1 },
  'gotrue-identities-authorize': { key: "the user's partition (user and session read; a new flow item)", per: 'user', rcu: 2, wcu: 0 },
  'gotrue-identities-delete': {
    key: "the user's partition (user and session read; user and identity claim written in a transaction)",
    per: 'user',
    rcu: 2,
    wcu: 2,
  },
  'gotrue-user-update': { key: "the user's partition (user and session read, user written)", per: 'user', rcu: 2, wcu: 1 },
  'gotrue-logout': { key: "the user's partition (the sessions)", per: 'user', rcu: 0, wcu: 1 },
  'gotrue-recover': { key: 'reset bucket of the source address', per: 'address', rcu: 0, wcu: 1 },
  'gotrue-resend': { key: 'reset bucket of the source address', per: 'address', rcu: 0, wcu: 1 },
  'gotrue-verify': { key: 'the user item (read, then written in the transaction with the token)', per: 'user', rcu: 1, wcu: 2 },
  'gotrue-factors-enrol': {
    key: "the user's partition (user read; user and factor written in a transaction)",
    per: 'user',
    rcu: 2,
    wcu: 2,
  },
  'gotrue-factors-challenge': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'gotrue-factors-verify': {
    key: "the user's partition (user, factor and session read; factor and session written)",
    per: 'user',
    rcu: 3,
    wcu: 4,
  },
  'gotrue-factors-delete': {
    key: "the user's partition (user read; user and factor written in a transaction)",
    per: 'user',
    rcu: 2,
    wcu: 6,
  },
  'gotrue-jwks': { key: 'the public signing keys item, on a cold start only', per: 'deployment', rcu: 0, wcu: 0 },
  'gotrue-settings': none,
  openapi: none,
  docs: none,
  'docs-assets': none,
  'teams-list': { key: "the user's memberships in gsi1", per: 'user', rcu: 1, wcu: 0 },
  'teams-create': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'teams-get': { key: 'the team item (and the slug claim item)', per: 'team', rcu: 1, wcu: 0 },
  'teams-update': { key: 'the team item (read, then written in the transaction)', per: 'team', rcu: 1, wcu: 2 },
  'teams-delete': { key: 'the team item (deleted once)', per: 'team', rcu: 1, wcu: 2 },
  'audit-list': { key: "the team's audit log partition (a page of about 0.4 KB entries; gsi1 by action)", per: 'team', rcu: 5, wcu: 0 },
  'webhooks-create': { key: "the team's webhook count item (counted in the transaction)", per: 'team', rcu: 0, wcu: 2 },
  'webhooks-list': { key: "the team's webhook partition (at most 10 endpoints)", per: 'team', rcu: 1, wcu: 0 },
  'webhooks-delete': { key: "the team's webhook count item (counted in the transaction)", per: 'team', rcu: 0, wcu: 2 },
  'webhooks-deliveries': { key: "the endpoint's delivery log partition (a page of about 0.3 KB rows)", per: 'team', rcu: 2, wcu: 0 },
  'webhooks-replay': { key: "the team's replay allowance (a rate-limit item)", per: 'team', rcu: 0, wcu: 1 },
  'members-list': { key: "the team's members in gsi2 (a page)", per: 'team', rcu: 4, wcu: 0 },
  'members-update-role': { key: 'the team item (read; written only when an OWNER is involved)', per: 'team', rcu: 1, wcu: 0 },
  'members-remove': { key: 'the team item (read; written only when an OWNER leaves)', per: 'team', rcu: 1, wcu: 0 },
  'transfer-create': { key: "the team's mail bucket (and its hourly allowance)", per: 'team', rcu: 0, wcu: 1 },
  'transfer-accept': {
    key: 'the team item (read, then checked in the transaction; the transfer item likewise)',
    per: 'team',
    rcu: 1,
    wcu: 2,
  },
  'transfer-decline': { key: "the team's transfer item (read, then deleted in the transaction)", per: 'team', rcu: 1, wcu: 2 },
  'transfer-cancel': { key: "the team's transfer item (read, then deleted in the transaction)", per: 'team', rcu: 1, wcu: 2 },
  'invites-create': { key: "the team's mail bucket (and its hourly allowance)", per: 'team', rcu: 0, wcu: 1 },
  'invites-bulk': { key: "the team's mail bucket, a write per row: 100 (and its hourly allowance)", per: 'team', rcu: 0, wcu: 100 },
  'invites-list': { key: "the team's pending invites in gsi1 (a page)", per: 'team', rcu: 1, wcu: 0 },
  'invites-get': { key: 'the team item', per: 'team', rcu: 1, wcu: 0 },
  'invites-resend': { key: "the team's mail bucket (and its hourly allowance)", per: 'team', rcu: 0, wcu: 1 },
  'invites-delete': { key: 'the team item (read)', per: 'team', rcu: 1, wcu: 0 },
  'my-invites-list': { key: "the address's pending invites in gsi2 (a page)", per: 'user', rcu: 1, wcu: 0 },
  'my-invites-get': { key: 'the invite item', per: 'invite', rcu: 1, wcu: 0 },
  'invites-accept': {
    key: "the team's gsi2 partition (one membership row a join); the team item only for an OWNER",
    per: 'team',
    rcu: 1,
    wcu: 1,
  },
  'invites-decline': { key: 'the invite item', per: 'invite', rcu: 1, wcu: 2 },
  'page-invite': { key: 'the invite item', per: 'invite', rcu: 1, wcu: 0 },
  'page-verify': none,
  'page-reset': none,
  'page-unsubscribe': { key: "the link's token item", per: 'address', rcu: 1, wcu: 0 },
  unsubscribe: { key: "the address's block item", per: 'address', rcu: 0, wcu: 2 },
  'page-security': { key: "the user's partition (user and session)", per: 'user', rcu: 2, wcu: 0 },
  'page-security-action': { key: "the user's partition (what the action's use case reads and writes)", per: 'user', rcu: 2, wcu: 0 },
  'page-assets': none,
  fallback: none,
};

/** Calls a second one key allows: the tighter of its read and write limits (null: unbounded by DynamoDB). */
export const keyRate = ({ rcu, wcu }: { rcu: number; wcu: number }, readLimit: number, writeLimit: number): number | null => {
  const rates = [rcu > 0 ? readLimit / rcu : Infinity, wcu > 0 ? writeLimit / wcu : Infinity];
  const rate = Math.min(...rates);
  return Number.isFinite(rate) ? rate : null;
};

/** Calls a second that `concurrency` Lambda instances serve when one call takes `ms`. */
export const lambdaRate = (ms: number, concurrency: number): number => concurrency / (Math.max(ms, 1) / 1000);

const round = (rate: number | null): string => {
  if (rate === null) return '—';
  const digits = rate >= 100 ? -Math.floor(Math.log10(rate)) + 2 : 0;
  const factor = 10 ** Math.max(0, -digits);
  return (Math.floor(rate / factor) * factor).toLocaleString('en-US');
};

const units = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1));

export interface ModelRow {
  label: string;
  name: string;
  requests: number;
  rcu: number;
  wcu: number;
  lambdaMs: number | null;
  bound: Bound;
  perKey: number | null;
  perTable: number | null;
  lambdaDefault: number | null;
  lambdaNewAccount: number | null;
  /** Dollars per million such calls (costPerMillion), when its time was measured. */
  cost: number | null;
}

/** The model's rows: one per measured call, in the capacity part's order. */
/** A measured row's hottest key: its scenario's own, else its route's. */
export const boundOf = (row: Pick<CapacityRow, 'name' | 'bound'>): Bound | undefined =>
  row.bound ?? BOUNDS[row.name as RouteName | 'fallback'];

export const modelRows = (capacity: readonly CapacityRow[], load: readonly LoadRow[]): ModelRow[] =>
  capacity.map((row) => {
    const bound = boundOf(row);
    if (!bound) throw new Error(`no bound for ${row.name} in bench/scale-model.ts`);
    const timed = load.find((l) => l.label === row.label);
    const lambdaMs = timed?.handlerMs ? timed.handlerMs.p50 : null;
    return {
      label: row.label,
      name: row.name,
      requests: row.total,
      rcu: row.rcu,
      wcu: row.wcu,
      lambdaMs,
      bound,
      perKey: keyRate(bound, LIMITS.partitionRcu, LIMITS.partitionWcu),
      perTable: keyRate(row, LIMITS.tableRcu, LIMITS.tableWcu),
      lambdaDefault: lambdaMs === null ? null : lambdaRate(lambdaMs, LIMITS.accountConcurrency),
      lambdaNewAccount: lambdaMs === null ? null : lambdaRate(lambdaMs, LIMITS.newAccountConcurrency),
      cost: lambdaMs === null ? null : costPerMillion(row, lambdaMs),
    };
  });

/** The markdown table docs/scale.md carries between its markers. */
export const renderModel = (rows: readonly ModelRow[]): string => {
  const header =
    '| route | requests | RCU | WCU | Lambda ms | bound by | per | calls/s per key | calls/s per table | calls/s, 1,000 instances | calls/s, 10 instances | $ per million calls |';
  const lines = rows.map((r) =>
    [
      r.label,
      String(r.requests),
      units(r.rcu),
      units(r.wcu),
      r.lambdaMs === null ? '—' : r.lambdaMs.toFixed(1),
      r.bound.key,
      r.bound.per,
      round(r.perKey),
      round(r.perTable),
      round(r.lambdaDefault),
      round(r.lambdaNewAccount),
      r.cost === null ? '—' : `$${r.cost.toFixed(2)}`,
    ].join(' | '),
  );
  return [
    header,
    `|${header
      .split('|')
      .slice(1, -1)
      .map(() => '---')
      .join('|')}|`,
    ...lines.map((l) => `| ${l} |`),
  ].join('\n');
};

/** The table for the benchmark's results as bench/results/latest.json holds them. */
export const modelTable = (latest: { results: { capacity?: { rows: CapacityRow[] }; load?: { rows: LoadRow[] } } }): string => {
  const { capacity, load } = latest.results;
  if (!capacity || !load) throw new Error('bench/results/latest.json lacks the capacity or load part: run npm run bench');
  return renderModel(modelRows(capacity.rows, load.rows));
};

export const MARKERS = {
  start: '<!-- scale-model:start (npm run scale:doc writes this table) -->',
  end: '<!-- scale-model:end -->',
} as const;

/** `doc` with the text between its markers replaced by `table`. */
export const withModel = (doc: string, table: string): string => {
  const start = doc.indexOf(MARKERS.start);
  const end = doc.indexOf(MARKERS.end);
  if (start < 0 || end < start) throw new Error('docs/scale.md has lost its scale-model markers');
  return `${doc.slice(0, start + MARKERS.start.length)}\n${table}\n${doc.slice(end)}`;
};

/**
 * The deploy-time options an operator sets with `cdk deploy -c name=value` (docs/scale.md explains
 * the throttles, docs/operations.md the rest). Every default must deploy and serve on a fresh AWS
 * account, whose Lambda concurrency quota may be as low as 10; the riskier settings are opt-in.
 */
import type { Node } from 'constructs';
import { type Provider, ProviderSettings } from '#lib/core/oauth-settings.ts';
import { isPlainAddress, parseSender } from '#lib/mail/safety.ts';

export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

/**
 * How the mailer and the outbox sweeper send. `log`: nothing is sent, each message is one log line
 * (the deploy works on a fresh account, and a stack output says so). `ses`: SES, as `from`, through
 * `identity`, which the stack creates (`createIdentity`, `-c sesDomain`) or which is verified already
 * (`-c sesIdentity`).
 */
export type MailOptions =
  | { readonly transport: 'log'; readonly publicUrl: string | undefined }
  | {
      readonly transport: 'ses';
      /** A domain, or (`sesIdentity` only) one address. */
      readonly identity: string;
      readonly createIdentity: boolean;
      /** MAIL_FROM: an address at the identity, optionally with a display name. */
      readonly from: string;
      /** The base of the links in e-mails; undefined: the API's URL. */
      readonly publicUrl: string | undefined;
    };

export interface DeployOptions {
  /** API Gateway's per-route ceiling (HTTP API stage default route settings): every route, all callers together. */
  routes: Throttle;
  /** The same for sign-up, sign-in, refresh and password change, where each request may hash a password. */
  credentials: Throttle;
  /** Reserve the route table's concurrency per function (off by default: it needs quota; see below). */
  reservedConcurrency: boolean;
  /** Shift each API function's traffic to a new version by CodeDeploy canary, rolled back on its alarms (off: at once). */
  gradualDeploy: boolean;
  /** Lambda active tracing (X-Ray) on every function. */
  tracing: boolean;
  /**
   * Ship each bundle's V8 compile cache (infra/compile-cache.ts). Off by default: it only serves a
   * runtime with the synth machine's Node version, architecture and uid, and its bytes differ per
   * checkout, so each deploy from a fresh clone updates every function (docs/operations.md).
   */
  compileCache: boolean;
  /**
   * Ship each bundle's source map and run Node with --enable-source-maps, for stack traces that
   * name the source files (`-c sourceMaps=true`). Off by default: the map is 2.2 to 2.4 MB per
   * function, Node parses it on every cold start (some 15 ms), and its `sources` hold paths
   * relative to the synth's output folder, so two checkouts would give every function a new hash.
   */
  sourceMaps: boolean;
  /** Subscribed to the alarm topic by e-mail; none: the topic has no subscriber until one is added. */
  alarmEmail: string | undefined;
  /**
   * Alarms of every function's own that page (`-c functionAlarms=true`). Off by default: the
   * service's alarms page once per outage, these once per function (about $0.20 a month each).
   */
  functionAlarms: boolean;
  /** A CloudWatch dashboard (`-c dashboard=true`). Off by default: $3 a month past an account's first three. */
  dashboard: boolean;
  /** An AWS Budgets monthly cost budget for the account, in USD, that notifies the alarm topic (`-c monthlyBudget=50`). */
  monthlyBudget: number | undefined;
  mail: MailOptions;
  /**
   * A table the functions use instead of the data stack's: one restored from point-in-time recovery
   * (docs/operations.md), with its stream. Undefined: the data stack's table.
   */
  table: { readonly tableName: string; readonly tableStreamArn: string } | undefined;
  /**
   * The access tokens' `iss` and the discovery document's `issuer` (`-c issuer`): an https URL that
   * serves this API's /.well-known/ (a custom domain). Undefined: the API's own URL.
   */
  issuer: string | undefined;
  /**
   * Passkeys' relying party (`-c passkeyRpId`, a domain) and the origins of the pages that use them
   * (`-c passkeyOrigins`, comma-separated https origins on that domain). Undefined: the public URL's
   * host and origin (`-c publicUrl`, else the API's own URL).
   */
  passkeys: { readonly rpId: string | undefined; readonly origins: readonly string[] | undefined };
  /**
   * Provider sign-in (docs/sso.md): the providers (`-c oauthProviders`, their JSON without secrets)
   * and the app URLs a sign-in may return to (`-c oauthRedirectUrls`, comma-separated). With any
   * provider, the stack makes the secret their client secrets go in.
   */
  oauth: { readonly providers: readonly Provider[]; readonly redirectUrls: readonly string[] };
}

/**
 * The defaults. The gateway is a safety ceiling against a runaway client's bill, not the abuse
 * control (that lives in the table: lib/limits/), so it sits above what one route's
 * functions and the table sustain on a default account (docs/scale.md): no route below 1,000
 * requests a second, no credential route below 100.
 */
export const DEFAULT_OPTIONS: DeployOptions = {
  routes: { rateLimit: 1000, burstLimit: 2000 },
  credentials: { rateLimit: 100, burstLimit: 200 },
  reservedConcurrency: false,
  gradualDeploy: false,
  tracing: false,
  compileCache: false,
  sourceMaps: false,
  alarmEmail: undefined,
  functionAlarms: false,
  dashboard: false,
  monthlyBudget: undefined,
  mail: { transport: 'log', publicUrl: undefined },
  table: undefined,
  issuer: undefined,
  passkeys: { rpId: undefined, origins: undefined },
  oauth: { providers: [], redirectUrls: [] },
};

/** Lambda keeps this much of an account's concurrency unreserved; reservations must leave it. */
export const UNRESERVED_MINIMUM = 100;

/** `-c` values arrive as strings, cdk.json and tests may give numbers or booleans. */
const positiveInt = (key: string, raw: unknown, fallback: number): number => {
  if (raw === undefined) return fallback;
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`context ${key} must be a positive integer, not ${JSON.stringify(raw)}`);
  return value;
};

/** A positive amount of US dollars with at most two decimals, or undefined when the key is not set. */
const dollars = (key: string, raw: unknown): number | undefined => {
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isFinite(value) || value <= 0 || Math.abs(value * 100 - Math.round(value * 100)) > 1e-9)
    throw new Error(`context ${key} must be a positive amount of US dollars such as 50 or 12.50, not ${JSON.stringify(raw)}`);
  return value;
};

const flag = (key: string, raw: unknown, fallback: boolean): boolean => {
  if (raw === undefined) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new Error(`context ${key} must be true or false, not ${JSON.stringify(raw)}`);
};

/** A non-empty string without surrounding space, or undefined when the key is not set. */
const text = (key: string, raw: unknown): string | undefined => {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new Error(`context ${key} must be a non-empty string, not ${JSON.stringify(raw)}`);
  return raw.trim();
};

/** A DNS name of at least two labels (RFC 1123), compared in lower case. */
const isDomain = (value: string): boolean =>
  value.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/.test(value);

const domain = (key: string, raw: unknown): string | undefined => {
  const value = text(key, raw)?.toLowerCase();
  if (value !== undefined && !isDomain(value))
    throw new Error(`context ${key} must be a domain name such as example.com, not ${JSON.stringify(raw)}`);
  return value;
};

const throttle = (node: Node, rateKey: string, burstKey: string, fallback: Throttle): Throttle => {
  const rateLimit = positiveInt(rateKey, node.tryGetContext(rateKey), fallback.rateLimit);
  const burstLimit = positiveInt(burstKey, node.tryGetContext(burstKey), fallback.burstLimit);
  // API Gateway takes any pair, but a burst below the rate cannot absorb one second's requests.
  if (burstLimit < rateLimit) throw new Error(`context ${burstKey} (${burstLimit}) must be at least ${rateKey} (${rateLimit})`);
  return { rateLimit, burstLimit };
};

/** Context `key`: an absolute https URL without credentials, query or fragment; a trailing `/` is dropped (as lib/core/config.ts does). */
const httpsUrl = (key: string, raw: unknown): string | undefined => {
  const value = text(key, raw);
  if (value === undefined) return undefined;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'https:' || url.username || url.password || url.search || url.hash) {
    throw new Error(
      `context ${key} must be an absolute https URL without credentials, query or fragment, such as https://roster.example.com, not ${JSON.stringify(raw)}`,
    );
  }
  return value.replace(/\/+$/, '');
};

/**
 * The mail settings. SES only when an identity is named, so a plain deploy works on a fresh account
 * (its mail is logged, and the stack says so); `mailFrom` must be at that identity, since SES refuses
 * any other sender.
 */
const mailOptions = (node: Node): MailOptions => {
  const sesDomain = domain('sesDomain', node.tryGetContext('sesDomain'));
  const sesIdentity = text('sesIdentity', node.tryGetContext('sesIdentity'))?.toLowerCase();
  const mailFrom = text('mailFrom', node.tryGetContext('mailFrom'));
  const url = httpsUrl('publicUrl', node.tryGetContext('publicUrl'));
  if (sesDomain && sesIdentity)
    throw new Error(
      'context sesDomain and sesIdentity exclude each other: sesDomain makes the stack create the identity, sesIdentity names one verified already',
    );
  const identity = sesDomain ?? sesIdentity;
  if (identity === undefined) {
    if (mailFrom !== undefined) throw new Error('context mailFrom needs sesDomain or sesIdentity, the SES identity to send it through');
    return { transport: 'log', publicUrl: url };
  }
  if (sesIdentity !== undefined && !isDomain(sesIdentity) && !isPlainAddress(sesIdentity)) {
    throw new Error(`context sesIdentity must be a domain or an e-mail address verified in SES, not ${JSON.stringify(sesIdentity)}`);
  }
  const isAddress = identity.includes('@');
  const from = mailFrom ?? (isAddress ? identity : `Roster <no-reply@${identity}>`);
  let address: string;
  try {
    address = parseSender(from).address.toLowerCase();
  } catch {
    throw new Error(`context mailFrom must be an address or "Name <address>" on one line, not ${JSON.stringify(from)}`);
  }
  const atIdentity = isAddress ? address === identity : address.slice(address.lastIndexOf('@') + 1) === identity;
  if (!atIdentity)
    throw new Error(
      `context mailFrom (${address}) must be ${isAddress ? '' : 'an address at '}the SES identity ${identity}, the only sender SES accepts`,
    );
  return { transport: 'ses', identity, createIdentity: sesDomain !== undefined, from, publicUrl: url };
};

const alarmEmail = (raw: unknown): string | undefined => {
  const value = text('alarmEmail', raw);
  if (value !== undefined && !isPlainAddress(value))
    throw new Error(`context alarmEmail must be one e-mail address, not ${JSON.stringify(raw)}`);
  return value;
};

/**
 * `-c tableName=… -c tableStreamArn=…`, both or neither: the stream ARN names the same table
 * (`arn:<partition>:dynamodb:<region>:<account>:table/<tableName>/stream/<label>`).
 */
const restoredTable = (node: Node): DeployOptions['table'] => {
  const tableName = text('tableName', node.tryGetContext('tableName'));
  const tableStreamArn = text('tableStreamArn', node.tryGetContext('tableStreamArn'));
  if (tableName === undefined && tableStreamArn === undefined) return undefined;
  if (tableName === undefined || tableStreamArn === undefined)
    throw new Error("context tableName and tableStreamArn go together: the table to use instead of the data stack's, and its stream");
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName))
    throw new Error(`context tableName must be a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), not ${JSON.stringify(tableName)}`);
  const stream = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/([A-Za-z0-9_.-]+)\/stream\/[0-9A-Za-z:.-]+$/.exec(tableStreamArn);
  if (stream?.[1] !== tableName)
    throw new Error(
      `context tableStreamArn must be the stream ARN of table ${tableName} (aws dynamodb describe-table --table-name ${tableName}), not ${JSON.stringify(tableStreamArn)}`,
    );
  return { tableName, tableStreamArn };
};

/** `-c passkeyRpId` and `-c passkeyOrigins`: each origin on the relying party's domain, as WebAuthn requires. */
const passkeyOptions = (node: Node): DeployOptions['passkeys'] => {
  const rpId = domain('passkeyRpId', node.tryGetContext('passkeyRpId'));
  const raw = text('passkeyOrigins', node.tryGetContext('passkeyOrigins'));
  const origins = raw?.split(',').map((entry, i) => {
    const url = httpsUrl(`passkeyOrigins[${i}]`, entry.trim()) as string;
    if (new URL(url).origin !== url)
      throw new Error(`context passkeyOrigins must list origins (https://host[:port], no path), not ${JSON.stringify(url)}`);
    const host = new URL(url).hostname;
    if (rpId !== undefined && host !== rpId && !host.endsWith(`.${rpId}`))
      throw new Error(`context passkeyOrigins: ${url} is not on the relying party's domain ${rpId} (-c passkeyRpId)`);
    return url;
  });
  return { rpId, origins };
};

/** An app URL a provider sign-in may return to: https, or http to this machine (an app in development). */
const redirectUrl = (key: string, raw: string): string => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  const local = url?.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (!url || (url.protocol !== 'https:' && !local) || url.username || url.password || url.hash)
    throw new Error(
      `context ${key} must list absolute https URLs (http only on localhost), without credentials or fragment, not ${JSON.stringify(raw)}`,
    );
  return url.href;
};

/** `-c oauthProviders` (a JSON array, lib/core/oauth-settings.ts) and `-c oauthRedirectUrls`. */
const oauthOptions = (node: Node): DeployOptions['oauth'] => {
  const raw: unknown = node.tryGetContext('oauthProviders');
  let parsed: unknown = [];
  if (raw !== undefined) {
    try {
      parsed = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : raw;
    } catch {
      throw new Error('context oauthProviders must be a JSON array of providers (docs/sso.md)');
    }
  }
  const checked = ProviderSettings.safeParse(parsed);
  if (!checked.success)
    throw new Error(
      `context oauthProviders: ${checked.error.issues.map((i) => `${i.path.join('.') || '(list)'} ${i.message}`).join('; ')}`,
    );
  const redirectUrls = (text('oauthRedirectUrls', node.tryGetContext('oauthRedirectUrls'))?.split(',') ?? [])
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry, i) => redirectUrl(`oauthRedirectUrls[${i}]`, entry));
  if (checked.data.length > 0 && redirectUrls.length === 0)
    throw new Error('context oauthRedirectUrls must list at least one app URL when oauthProviders names a provider');
  return { providers: checked.data, redirectUrls };
};

/** The options from the construct tree's context, checked; a bad value fails synth with one sentence. */
export const deployOptions = (node: Node): DeployOptions => ({
  routes: throttle(node, 'throttleRate', 'throttleBurst', DEFAULT_OPTIONS.routes),
  credentials: throttle(node, 'credentialThrottleRate', 'credentialThrottleBurst', DEFAULT_OPTIONS.credentials),
  reservedConcurrency: flag('reservedConcurrency', node.tryGetContext('reservedConcurrency'), DEFAULT_OPTIONS.reservedConcurrency),
  gradualDeploy: flag('gradualDeploy', node.tryGetContext('gradualDeploy'), DEFAULT_OPTIONS.gradualDeploy),
  tracing: flag('tracing', node.tryGetContext('tracing'), DEFAULT_OPTIONS.tracing),
  compileCache: flag('compileCache', node.tryGetContext('compileCache'), DEFAULT_OPTIONS.compileCache),
  sourceMaps: flag('sourceMaps', node.tryGetContext('sourceMaps'), DEFAULT_OPTIONS.sourceMaps),
  alarmEmail: alarmEmail(node.tryGetContext('alarmEmail')),
  functionAlarms: flag('functionAlarms', node.tryGetContext('functionAlarms'), DEFAULT_OPTIONS.functionAlarms),
  dashboard: flag('dashboard', node.tryGetContext('dashboard'), DEFAULT_OPTIONS.dashboard),
  monthlyBudget: dollars('monthlyBudget', node.tryGetContext('monthlyBudget')),
  mail: mailOptions(node),
  table: restoredTable(node),
  issuer: httpsUrl('issuer', node.tryGetContext('issuer')),
  passkeys: passkeyOptions(node),
  oauth: oauthOptions(node),
});

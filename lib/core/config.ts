/** Settings read once per process from the environment; README.md lists them. */
const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};

/** As `int`, but 0 is allowed too (a setting that 0 turns off). */
const zeroOrMore = (name: string, fallback: number): number => (process.env[name] === '0' ? 0 : int(name, fallback));

const publicUrl = (process.env.PUBLIC_URL || `http://localhost:${process.env.PORT || 3000}`).replace(/\/+$/, '');

/** A comma-separated list, trimmed, without empty entries. */
const list = (raw: string): string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

export const config = {
  tableName: process.env.TABLE_NAME ?? 'roster',
  /** Only set locally (DynamoDB Local); the deployed functions use the regional endpoint. */
  dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT,
  region: process.env.AWS_REGION ?? 'us-east-1',
  /** Bounds on each DynamoDB attempt (3 attempts), well inside the function timeout. */
  dynamodbConnectTimeoutMs: int('DYNAMODB_CONNECT_TIMEOUT_MS', 1000),
  dynamodbRequestTimeoutMs: int('DYNAMODB_REQUEST_TIMEOUT_MS', 2000),
  /**
   * `iss` of access tokens and the OpenID discovery document's `issuer`: an https URL of the
   * deployment (the stack sets the API's URL, or `-c issuer`), whose /.well-known/ serves the keys.
   */
  issuer: (process.env.TOKEN_ISSUER || `http://localhost:${process.env.PORT || 3000}`).replace(/\/+$/, ''),
  accessTokenSeconds: int('ACCESS_TOKEN_TTL_SECONDS', 3600),
  refreshTokenDays: int('REFRESH_TOKEN_TTL_DAYS', 30),
  /** A session not refreshed for this long cannot be refreshed any more. */
  refreshIdleDays: int('REFRESH_IDLE_DAYS', 7),
  /** A rotated refresh token presented again within this window gets the same new pair (two tabs). */
  refreshGraceSeconds: int('REFRESH_GRACE_SECONDS', 10),
  inviteDays: int('INVITE_TTL_DAYS', 7),
  /** How long ended invites stay readable (for 409 invite_not_pending) before TTL removes them. */
  endedInviteRetentionDays: int('ENDED_INVITE_RETENTION_DAYS', 30),
  /** How long audit log entries are kept before TTL removes them (docs/audit.md). */
  auditRetentionDays: int('AUDIT_RETENTION_DAYS', 365),
  /** Webhook URLs may be http and reach loopback: local use and tests only, never set by the stack (docs/webhooks.md). */
  webhooksAllowPrivateUrls: process.env.WEBHOOKS_ALLOW_PRIVATE_URLS === 'true',
  /** How long each delivery attempt stays in an endpoint's delivery log (docs/webhooks.md). */
  webhookDeliveryLogDays: int('WEBHOOK_DELIVERY_LOG_DAYS', 30),
  /** Replays one team may ask for per hour: each may become 8 POSTs (docs/webhooks.md). */
  webhookReplaysPerTeamHour: int('WEBHOOK_REPLAYS_PER_TEAM_HOUR', 60),
  passwordMinLength: int('PASSWORD_MIN_LENGTH', 8),
  /** Invitation e-mails (create, re-invite, resend) one team may send per hour. */
  teamMailsPerHour: int('INVITE_MAILS_PER_TEAM_HOUR', 50),
  /** Whether the inviter gets a short notice when an invite is declined. */
  declineNotice: (process.env.INVITE_DECLINE_NOTICE ?? 'true') !== 'false',
  /** Invitation e-mails one account may cause per hour, across all its teams. */
  userInviteMailsPerHour: int('INVITE_MAILS_PER_USER_HOUR', 100),
  /**
   * Sign-up and e-mail change answer for an address an account holds as for a new one, and mail its
   * owner instead of answering 409; sign-up then signs in no one and an unconfirmed account cannot
   * sign in (docs/accounts.md, "Concealing accounts"). Off by default: the contract's 409.
   */
  concealAccounts: process.env.CONCEAL_ACCOUNTS === 'true',
  /** Sending, accepting and declining invites need a confirmed e-mail address (docs/accounts.md). */
  invitesRequireVerifiedEmail: (process.env.INVITES_REQUIRE_VERIFIED_EMAIL ?? 'true') !== 'false',
  // Account e-mails: lib/auth/account-tokens.ts and docs/accounts.md.
  /** How long a link to confirm an address (sign-up, resend, e-mail change) works. */
  verifyTokenMinutes: int('VERIFY_TOKEN_TTL_MINUTES', 24 * 60),
  /** How long a password reset link works. */
  resetTokenMinutes: int('RESET_TOKEN_TTL_MINUTES', 60),
  // Mail per recipient, whoever causes it: lib/limits/recipient-mail.ts and docs/mail.md "Allowances".
  /** Account e-mails (confirmations, resets, e-mail change links and notices) one address may be sent per hour. */
  accountMailsPerAddressHour: int('ACCOUNT_MAILS_PER_ADDRESS_HOUR', 5),
  /** Seconds between two e-mails of one kind to one address (GoTrue keeps 60); 0 turns the gap off. */
  recipientMailGapSeconds: zeroOrMore('RECIPIENT_MAIL_GAP_SECONDS', 60),
  /** Invitations and ownership nominations one address may be sent per hour, and per day, from every sender together. */
  unsolicitedMailsPerAddressHour: int('UNSOLICITED_MAILS_PER_ADDRESS_HOUR', 3),
  unsolicitedMailsPerAddressDay: int('UNSOLICITED_MAILS_PER_ADDRESS_DAY', 10),
  // Brute-force protection: lib/limits/ and README "Brute-force protection".
  /** Consecutive failed sign-ins of one account before the back-off starts. */
  accountFreeFailures: int('RATE_LIMIT_ACCOUNT_FAILURES', 5),
  /** First back-off after those failures; it doubles with each further failure. */
  accountBackoffSeconds: int('RATE_LIMIT_ACCOUNT_BACKOFF_SECONDS', 1),
  accountBackoffMaxSeconds: int('RATE_LIMIT_ACCOUNT_BACKOFF_MAX_SECONDS', 900),
  /** Failed attempts of one account in any 60 minutes (ASVS 4.0.3 2.2.1). */
  accountHourlyFailures: int('RATE_LIMIT_ACCOUNT_HOURLY_FAILURES', 100),
  /** Sign-in per source IP: failed password checks (successes give their token back); also per user for password changes. */
  ipBurst: int('RATE_LIMIT_IP_BURST', 30),
  ipRefill: int('RATE_LIMIT_IP_REFILL', 30),
  ipRefillSeconds: int('RATE_LIMIT_IP_REFILL_SECONDS', 300),
  /** Sign-up per source IP: a company onboarding its staff from one office (100 at once, 300 an hour). */
  signupBurst: int('RATE_LIMIT_SIGNUP_BURST', 100),
  signupRefill: int('RATE_LIMIT_SIGNUP_REFILL', 300),
  signupRefillSeconds: int('RATE_LIMIT_SIGNUP_REFILL_SECONDS', 3600),
  /** Refresh-token rotations per session (5 at once, then one per 12 s); never per IP. */
  refreshBurst: int('RATE_LIMIT_REFRESH_BURST', 5),
  refreshRefill: int('RATE_LIMIT_REFRESH_REFILL', 5),
  refreshRefillSeconds: int('RATE_LIMIT_REFRESH_REFILL_SECONDS', 60),
  /** Live sessions one user may hold; signing in past it ends the oldest. */
  maxSessionsPerUser: int('MAX_SESSIONS_PER_USER', 100),
  /** Secrets Manager secret holding the private signing keys; set only on the functions that sign. */
  signingKeySecretArn: process.env.SIGNING_KEY_SECRET_ARN,
  /** Token algorithms (comma-separated): the first signs new keys, all verify (docs/keys.md). */
  tokenAlgorithms: process.env.TOKEN_ALGORITHMS ?? 'RS256,EdDSA',
  /** Local mode keeps DynamoDB Local's files and the private signing keys here. */
  dataDir: process.env.DATA_DIR ?? '.data',
  // Mail: lib/mail/ and docs/mail.md.
  /** Base of the links in e-mails (`{PUBLIC_URL}/invites/{uuid}`), without a trailing slash. */
  publicUrl,
  // Passkeys: lib/auth/webauthn.ts and docs/mfa.md.
  /** The relying party id passkeys are bound to: a domain the origins are on (default: the public URL's host). */
  passkeyRpId: process.env.PASSKEY_RP_ID || new URL(publicUrl).hostname,
  /** The pages' origins a passkey answer may come from (default: the public URL's origin). */
  passkeyOrigins: list(process.env.PASSKEY_ORIGINS || new URL(publicUrl).origin),
  /** The name an authenticator shows beside a passkey. */
  passkeyRpName: process.env.PASSKEY_RP_NAME || 'Roster',
  // Provider sign-in: lib/auth/oauth-providers.ts and docs/sso.md.
  /** The providers people may sign in with: a JSON array (docs/sso.md); unset: none. */
  oauthProviders: process.env.OAUTH_PROVIDERS || '[]',
  /** Secrets Manager secret holding the providers' client secrets (a JSON object by provider id); set only on the callback. */
  oauthSecretArn: process.env.OAUTH_SECRET_ARN || undefined,
  /** Local mode only: the providers' client secrets as that JSON object, when no secret ARN is set. */
  oauthClientSecrets: process.env.OAUTH_CLIENT_SECRETS || undefined,
  /** Where a provider sign-in may send the browser back to (`redirect_to`): exact URLs, a query allowed (docs/sso.md). */
  redirectUrls: list(process.env.OAUTH_REDIRECT_URLS || ''),
  // Team domains: lib/teams/domains/ and docs/domains.md.
  /** DNS servers the domain proofs ask (`ip` or `ip:port`, comma-separated); unset: the system's (on Lambda, the VPC's resolver). */
  dnsServers: list(process.env.DNS_SERVERS || ''),
  /** Hours between two checks of a verified domain's TXT record. */
  domainRecheckHours: int('DOMAIN_RECHECK_HOURS', 24),
  /** `smtp`, `ses` or `log`; unset: `smtp` when SMTP_URL is set, else `log`. */
  mailTransport: process.env.MAIL_TRANSPORT || undefined,
  /** Sender of every message; its domain also names the Message-ID. */
  mailFrom: process.env.MAIL_FROM || 'Roster <roster@localhost>',
  /** SES configuration set every send names (the stack's: it routes bounces and complaints back). */
  sesConfigurationSet: process.env.SES_CONFIGURATION_SET || undefined,
  /** nodemailer connection URL, e.g. smtps://user:pass@smtp.example.com:465. */
  smtpUrl: process.env.SMTP_URL || undefined,
  /** Bounds each SMTP phase: connecting, the greeting, and any silence on the socket. */
  smtpTimeoutMs: int('SMTP_TIMEOUT_MS', 5000),
  /** Bounds one whole SMTP send, however the server trickles. */
  smtpSendTimeoutMs: int('SMTP_SEND_TIMEOUT_MS', 12_000),
  /** Directory with template overrides (invitation.subject.txt, invitation.txt, invitation.html, declined.*). */
  mailTemplateDir: process.env.MAIL_TEMPLATE_DIR || undefined,
  /**
   * How long a mailer's claim on an outbox message lasts, and so how soon a message caught by an
   * outage mid-send is claimed again. A send starts only with its transport's longest send (12 s)
   * and a margin left of it (lib/mail/outbox.ts), so no send outlives its claim.
   */
  outboxLeaseMs: int('OUTBOX_LEASE_MS', 20_000),
  /** How long an unfinished outbox message is left to the stream before the sweeper delivers it. */
  outboxSweepGraceMs: int('OUTBOX_SWEEP_GRACE_MS', 30_000),
} as const;

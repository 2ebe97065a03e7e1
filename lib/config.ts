/** Settings read once per process from the environment; README.md lists them. */
const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};

export const config = {
  tableName: process.env.TABLE_NAME ?? 'roster',
  /** Only set locally (DynamoDB Local); the deployed functions use the regional endpoint. */
  dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT,
  region: process.env.AWS_REGION ?? 'us-east-1',
  issuer: process.env.TOKEN_ISSUER ?? 'roster',
  accessTokenSeconds: int('ACCESS_TOKEN_TTL_SECONDS', 3600),
  refreshTokenDays: int('REFRESH_TOKEN_TTL_DAYS', 30),
  inviteDays: int('INVITE_TTL_DAYS', 7),
  /** How long ended invites stay readable (for 409 invite_not_pending) before TTL removes them. */
  endedInviteRetentionDays: int('ENDED_INVITE_RETENTION_DAYS', 30),
  passwordMinLength: int('PASSWORD_MIN_LENGTH', 8),
  /** Secrets Manager secret holding the token signing key (deployed stack). */
  signingKeySecretArn: process.env.SIGNING_KEY_SECRET_ARN,
  /** Local mode keeps the signing key in a file here. */
  dataDir: process.env.DATA_DIR ?? '.data',
} as const;

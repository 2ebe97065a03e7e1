/**
 * What `npm run preflight` reports: one finding per line, `ok`, `warn` (the deploy works, but
 * something needs the operator) or `fail` (the deploy, or the mail, would fail), each with the fix.
 */
export type Level = 'ok' | 'warn' | 'fail';

export interface Finding {
  level: Level;
  /** What was checked: `account`, `bootstrap`, `stack Roster`, ... */
  check: string;
  message: string;
  /** A command to run or a doc to read. */
  fix?: string | undefined;
}

/** The account and region the checks run against (and the fixes name). */
export interface Target {
  account: string;
  region: string;
}

export const finding = (level: Level, check: string, message: string, fix?: string): Finding => ({ level, check, message, fix });

/** `fail  bootstrap    <message>; fix: <fix>`: the level and check in columns, so the lines read as a table. */
export const formatFinding = ({ level, check, message, fix }: Finding): string =>
  `${level.padEnd(4)}  ${check.padEnd(16)} ${message}${fix ? `; fix: ${fix}` : ''}`;

const nameOf = (error: unknown): string => (error instanceof Error ? error.name : '');

/** The errors each service answers when the caller's policy lacks the action (query APIs: `AccessDenied`). */
export const isAccessDenied = (error: unknown): boolean => ['AccessDenied', 'AccessDeniedException'].includes(nameOf(error));

/** CloudFormation's answer for a stack name that has no live stack. */
export const isMissingStack = (error: unknown): boolean =>
  nameOf(error) === 'ValidationError' && /does not exist/.test((error as Error).message);

/** The SDK found no credentials at all (environment, profile, SSO, container, instance). */
export const isNoCredentials = (error: unknown): boolean => nameOf(error) === 'CredentialsProviderError';

/** No answer from the endpoint: no such host (a region without the service, or a typo) or no network. */
export const isUnreachable = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && ['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'].includes(code);
};

/** An error in one line: its name and message, without the stack. */
export const describeError = (error: unknown): string => {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\s+/g, ' ').trim();
};

/**
 * A call that failed: the check is skipped and says so, never a crash. Access denied names the
 * permission to add; anything else (throttling, no network) is quoted.
 */
export const notChecked = (check: string, permission: string, error: unknown): Finding =>
  isAccessDenied(error)
    ? finding(
        'warn',
        check,
        `not checked: access denied to ${permission}`,
        `allow ${permission} to these credentials (README, Deploy: what preflight needs)`,
      )
    : finding('warn', check, `not checked: ${permission} failed: ${describeError(error)}`);

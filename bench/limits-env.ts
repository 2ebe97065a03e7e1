/**
 * High limits for the benchmark's processes, as test/setup.ts sets them for the tests: the
 * benchmark measures the endpoints, not the limiters' 429s (the NAT part measures those).
 */
export const BENCH_LIMITS = {
  RATE_LIMIT_IP_BURST: '1000000',
  RATE_LIMIT_IP_REFILL: '1000000',
  RATE_LIMIT_SIGNUP_BURST: '1000000',
  RATE_LIMIT_SIGNUP_REFILL: '1000000',
  RATE_LIMIT_REFRESH_BURST: '1000000',
  RATE_LIMIT_REFRESH_REFILL: '1000000',
  RATE_LIMIT_ACCOUNT_FAILURES: '1000000',
  RATE_LIMIT_ACCOUNT_HOURLY_FAILURES: '1000000',
  INVITE_MAILS_PER_TEAM_HOUR: '1000000',
  INVITE_MAILS_PER_USER_HOUR: '1000000',
  ACCOUNT_MAILS_PER_ADDRESS_HOUR: '1000000',
} as const;

import { FUNCTION_DEFAULTS } from '#lib/http/routes.ts';

/** us-east-1 list prices (USD) behind "cost of one million calls"; the report prints them. */
export const PRICES = {
  region: 'us-east-1',
  dynamoDbOnDemandPerMillionWriteUnits: 0.625,
  dynamoDbOnDemandPerMillionReadUnits: 0.125,
  lambdaArm64PerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  httpApiPerMillionRequests: 1.0,
} as const;

export interface Cost {
  dynamoDb: number;
  /** Null without a measured warm duration. */
  lambda: number | null;
  apiGateway: number;
  total: number | null;
}

/** One million calls of an endpoint: its capacity units per call, and Lambda billed per started millisecond. */
export const costPerMillion = ({ rcu, wcu }: { rcu: number; wcu: number }, warmMs: number | null): Cost => {
  const dynamoDb = rcu * PRICES.dynamoDbOnDemandPerMillionReadUnits + wcu * PRICES.dynamoDbOnDemandPerMillionWriteUnits;
  const gbSeconds = warmMs === null ? null : (FUNCTION_DEFAULTS.memoryMb / 1024) * (Math.ceil(warmMs) / 1000) * 1e6;
  const lambda = gbSeconds === null ? null : gbSeconds * PRICES.lambdaArm64PerGbSecond + PRICES.lambdaPerMillionRequests;
  const apiGateway = PRICES.httpApiPerMillionRequests;
  return { dynamoDb, lambda, apiGateway, total: lambda === null ? null : dynamoDb + lambda + apiGateway };
};

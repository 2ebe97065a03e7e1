import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config } from '#lib/core/config.ts';
import { currentRequest } from '#lib/core/log.ts';

/** Operations that accept ReturnConsumedCapacity (the others would reject the parameter). */
export const CAPACITY_OPERATIONS: ReadonlySet<string> = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'TransactGetItems',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);
const READ_OPERATIONS: ReadonlySet<string> = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

interface Consumed {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/** The read and write units an answer reports (ConsumedCapacity, one entry or one per table). */
export const unitsOf = (operation: string, output: unknown): { read: number; write: number } => {
  const consumed = (output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity;
  const units = { read: 0, write: 0 };
  const read = READ_OPERATIONS.has(operation);
  for (const c of consumed === undefined ? [] : [consumed].flat()) {
    units.read += c.ReadCapacityUnits ?? (read ? (c.CapacityUnits ?? 0) : 0);
    units.write += c.WriteCapacityUnits ?? (read ? 0 : (c.CapacityUnits ?? 0));
  }
  return units;
};

/**
 * Counts each DynamoDB request of an API request, and the units it consumed, on that request's
 * line (lib/http/measured.ts). TOTAL: the table's and its indexes' units together, for a few bytes more
 * in the answer. Requests made outside an API request (background functions) pass untouched.
 */
const countForRequest = (client: DynamoDBDocumentClient): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const record = currentRequest();
      if (!record) return next(args);
      const operation = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      const asked = CAPACITY_OPERATIONS.has(operation) && input.ReturnConsumedCapacity === undefined;
      record.dynamodb.requests += 1;
      const result = await next(asked ? { ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } } : args);
      const units = unitsOf(operation, result.output);
      record.dynamodb.readUnits += units.read;
      record.dynamodb.writeUnits += units.write;
      return result;
    },
    { step: 'initialize', name: 'countForRequest' },
  );
};

/** The SDK's logger middleware, by the name it is added under (`loggerMiddlewareOptions`). */
export const LOGGER_MIDDLEWARE = 'loggerMiddleware';

/**
 * Settings the SDK would otherwise look up on a cold start's first request, each in the environment
 * and then in the shared config files (~/.aws/config and credentials), given the values it finds on
 * Lambda, where neither sets them: its defaults. The first call skips those lookups and, with an
 * endpoint, reads no file at all (test/api/db-client.test.ts). Without one, the SDK still looks
 * for a configured endpoint URL, which the deployed-mode tests set (AWS_ENDPOINT_URL).
 */
const SETTINGS = {
  retryMode: 'standard',
  useFipsEndpoint: false,
  useDualstackEndpoint: false,
  accountIdEndpointMode: 'preferred',
  authSchemePreference: [],
  disableClockSkewCorrection: false,
  userAgentAppId: () => Promise.resolve(undefined),
  // Not `endpointDiscoveryEnabled: false`: any value there counts as the caller's choice, which the
  // SDK refuses alongside a custom endpoint (DynamoDB Local's); unset, no command discovers one.
  endpointDiscoveryEnabledProvider: () => Promise.resolve(undefined),
} as const satisfies DynamoDBClientConfig;

/**
 * One client per process, made at module scope so warm invocations reuse its connections.
 * Timeouts bound every call (by default 1 s to connect, 2 s per attempt, 3 attempts) well inside
 * the function timeout, so a hung database becomes a 503 rather than a gateway timeout.
 */
export const createDocumentClient = (endpoint = config.dynamodbEndpoint): DynamoDBDocumentClient => {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      ...SETTINGS,
      region: config.region,
      maxAttempts: 3,
      requestHandler: new NodeHttpHandler({
        connectionTimeout: config.dynamodbConnectTimeoutMs,
        requestTimeout: config.dynamodbRequestTimeoutMs,
        throwOnRequestTimeout: true,
      }),
      ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  countForRequest(client);
  // Roster gives the SDK no logger, yet its logger middleware builds a redacted copy of every input
  // and output (a walk of each by its schema) to hand to the no-op default: CPU on every request,
  // and on a cold start a first walk of each command's shapes.
  client.middlewareStack.remove(LOGGER_MIDDLEWARE);
  return client;
};

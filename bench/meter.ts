import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CAPACITY_OPERATIONS, unitsOf } from '#lib/db/client.ts';
import { db } from '#lib/db/service.ts';

/** One DynamoDB SDK call as the handlers made it: what it was, what it cost, and when it waited. */
export interface DynamoCall {
  operation: string;
  /** Whole SDK call (marshalling, signing, retries, parsing), performance.now() ms. */
  sdk: [number, number];
  /** Only the HTTP exchanges inside it (one per attempt). */
  network: [number, number][];
  rcu: number;
  wcu: number;
}

const CALL = Symbol('benchCall');
let recording: { calls: DynamoCall[]; capacity: boolean } | null = null;

const attach = (client: DynamoDBDocumentClient): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      // TOTAL: the table's and the indexes' units together (DynamoDB Local's INDEXES breakdown drops the index writes).
      if (recording?.capacity && CAPACITY_OPERATIONS.has(operation)) input.ReturnConsumedCapacity = 'TOTAL';
      const call: DynamoCall = { operation, sdk: [performance.now(), 0], network: [], rcu: 0, wcu: 0 };
      (context as Record<symbol, unknown>)[CALL] = call;
      try {
        const result = await next(args);
        const units = unitsOf(operation, result.output);
        call.rcu += units.read;
        call.wcu += units.write;
        return result;
      } finally {
        call.sdk[1] = performance.now();
        recording?.calls.push(call);
      }
    },
    { step: 'initialize', priority: 'high', name: 'benchMeter' },
  );
  // Innermost: wraps only the HTTP exchange, after serialising and signing, before parsing.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        ((context as Record<symbol, unknown>)[CALL] as DynamoCall | undefined)?.network.push([started, performance.now()]);
      }
    },
    { step: 'deserialize', priority: 'low', name: 'benchMeterNetwork' },
  );
};

let attached = false;

/**
 * Adds the meter to the client the handlers use, db()'s (the same middleware stack that
 * test/api/requests.test.ts counts on), once per process. It records only inside recordCalls;
 * otherwise requests pass untouched.
 */
export const meterHandlers = (): void => {
  if (!attached) attach(db().documents);
  attached = true;
};

/**
 * Runs `work` and returns the DynamoDB calls made meanwhile; with `capacity`, each asks for its
 * ConsumedCapacity, which changes nothing else about it. Only for one call at a time.
 */
export const recordCalls = async <T>(work: () => Promise<T>, { capacity = false } = {}): Promise<{ value: T; calls: DynamoCall[] }> => {
  if (recording) throw new Error('recordCalls does not nest');
  const calls: DynamoCall[] = [];
  recording = { calls, capacity };
  try {
    return { value: await work(), calls };
  } finally {
    recording = null;
  }
};

import { Agent, request } from 'node:http';

/**
 * Loads items into DynamoDB Local with BatchWriteItem (25 items a request, many in flight) sent as
 * plain HTTP. The items are exactly what ElectroDB writes; only the transport differs: the SDK's
 * serialisation costs about 70 µs of CPU per item against 17 µs here, and on two cores that CPU is
 * taken from DynamoDB Local (measured: 2,800 against 3,900 items/s). DynamoDB Local does not check
 * signatures, but wants the header.
 */
type Item = Record<string, unknown>;
type AttributeValue = { S: string } | { N: string } | { BOOL: boolean };

const BATCH = 25;
const IN_FLIGHT = 32;
const AUTHORIZATION = 'AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0';

/** DynamoDB JSON of a flat item (the entities written here have only strings, numbers and booleans). */
export const marshal = (item: Item): Record<string, AttributeValue> =>
  Object.fromEntries(
    Object.entries(item).flatMap(([name, value]): [string, AttributeValue][] => {
      if (value === undefined) return [];
      if (typeof value === 'string') return [[name, { S: value }]];
      if (typeof value === 'number') return [[name, { N: String(value) }]];
      if (typeof value === 'boolean') return [[name, { BOOL: value }]];
      throw new Error(`bulk-write: attribute ${name} is not a string, number or boolean`);
    }),
  );

export interface BulkWriter {
  /** Writes every item (retrying unprocessed ones); resolves when all are stored. */
  write: (items: Iterable<Item>) => Promise<number>;
  close: () => void;
}

export const bulkWriter = (endpoint: string, table: string): BulkWriter => {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const { hostname, port } = new URL(endpoint);
  const post = (body: string): Promise<{ UnprocessedItems?: Record<string, unknown[]> }> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          agent,
          hostname,
          port,
          method: 'POST',
          path: '/',
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'DynamoDB_20120810.BatchWriteItem',
            authorization: AUTHORIZATION,
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`BatchWriteItem ${res.statusCode}: ${text}`)),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  const write = async (items: Iterable<Item>): Promise<number> => {
    const source = items[Symbol.iterator]();
    let written = 0;
    const nextBatch = (): unknown[] => {
      const batch: unknown[] = [];
      while (batch.length < BATCH) {
        const next = source.next();
        if (next.done) break;
        batch.push({ PutRequest: { Item: marshal(next.value) } });
      }
      return batch;
    };
    const worker = async () => {
      for (let batch = nextBatch(); batch.length > 0; batch = nextBatch()) {
        let pending = batch;
        while (pending.length > 0) {
          const res = await post(JSON.stringify({ RequestItems: { [table]: pending } }));
          pending = res.UnprocessedItems?.[table] ?? [];
        }
        written += batch.length;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    return written;
  };
  return { write, close: () => agent.destroy() };
};

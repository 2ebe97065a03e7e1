import { notFound } from '#lib/core/errors.ts';
import { DomainName } from '#lib/wire/domains.ts';
import { SLUG_PATTERN } from '#lib/wire/schemas.ts';

/** Path parameters after checking: a value that cannot name anything is simply not found (404). */
export interface PathParams {
  slug: string;
  memberId: number;
  id: number;
  uuid: string;
  sessionId: string;
  deliveryId: string;
  factorId: string;
  provider: string;
  identityId: string;
  domain: string;
}

const ID = /^[1-9][0-9]{0,15}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const integerId = (value: string): number => {
  const n = Number(value);
  if (!ID.test(value) || !Number.isSafeInteger(n)) throw notFound();
  return n;
};

const uuidParam = (value: string): string => {
  if (!UUID.test(value)) throw notFound();
  return value.toLowerCase();
};

const checks: { [K in keyof PathParams]: (value: string) => PathParams[K] } = {
  slug: (value) => {
    if (!SLUG_PATTERN.test(value)) throw notFound();
    return value;
  },
  memberId: integerId,
  id: integerId,
  uuid: uuidParam,
  sessionId: uuidParam,
  deliveryId: uuidParam,
  factorId: uuidParam,
  provider: (value) => {
    if (!/^[a-z][a-z0-9-]{0,31}$/.test(value)) throw notFound();
    return value;
  },
  identityId: uuidParam,
  domain: (value) => {
    const checked = DomainName.safeParse(value);
    if (!checked.success || checked.data !== value) throw notFound();
    return value;
  },
};

/**
 * Checks the parameters a route has. The result is typed with every name; a handler reads only
 * the names of its own route's path (the HTTP suite calls every route).
 */
export const pathParams = (raw: Record<string, string | undefined> | undefined): PathParams => {
  const out: Partial<Record<keyof PathParams, unknown>> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    const check = checks[name as keyof PathParams];
    if (!check || value === undefined) throw notFound();
    out[name as keyof PathParams] = check(value);
  }
  return out as PathParams;
};

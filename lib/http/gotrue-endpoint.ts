import { type Call, endpoint } from './endpoint.ts';
import { jsonResponse } from './errors.ts';
import { GOTRUE_API_VERSION, gotrueErrorResponse } from './gotrue-errors.ts';
import { gotrueRequestOf } from './requests-gotrue.ts';
import type { RouteName } from './routes.ts';

/**
 * endpoint() for a Supabase-compatible route: its schemas from requests-gotrue.ts, GoTrue's error
 * shape, and bare bodies with the version header by which auth-js knows to read the error `code`s.
 */
export const gotrueEndpoint = <N extends RouteName>(name: N, run: (call: Call<N>) => Promise<unknown>) =>
  endpoint(name, run, {
    request: gotrueRequestOf(name),
    error: (error, requestId) => gotrueErrorResponse(error, requestId, name),
    success: (status, result, requestId) => jsonResponse(status, result, requestId, { 'x-supabase-api-version': GOTRUE_API_VERSION }),
  });

import { baseHeaders, errorResponse } from './errors.ts';
import { type Call, endpoint } from './endpoint.ts';
import { gotrueErrorResponse } from './gotrue-errors.ts';
import { apiRequestOf } from './requests.ts';
import { gotrueRequestOf } from './requests-gotrue.ts';
import { type RouteName, routeNamed } from './routes.ts';

/**
 * endpoint() for a route the browser navigates to and leaves at once (a provider sign-in's start
 * and callback, docs/sso.md): its use case answers where the browser goes next, sent as 302 with
 * `Location` and no body. Errors keep their dialect's envelope (there is no app to send them back to).
 */
export const redirectEndpoint = <N extends RouteName>(name: N, run: (call: Call<N>) => Promise<string>) =>
  endpoint(name, run, {
    request: routeNamed(name).dialect === 'gotrue' ? gotrueRequestOf(name) : apiRequestOf(name),
    error: routeNamed(name).dialect === 'gotrue' ? (error, requestId) => gotrueErrorResponse(error, requestId, name) : errorResponse,
    success: (_status, location, requestId) => {
      // No body, so no content type; no Referer from here on: the code and state in these URLs go nowhere else.
      const headers: Record<string, string> = { ...baseHeaders(requestId), location: String(location), 'referrer-policy': 'no-referrer' };
      delete headers['content-type'];
      return { statusCode: 302, headers, body: '' };
    },
  });

import { db } from '#lib/db/service.ts';
import { formFields } from '#lib/http/form-body.ts';
import { staticEndpoint } from '#lib/http/static.ts';
import { securityPost } from '#lib/identity/mfa/security-page.ts';

/** POST /account/security: the page's forms (sign-in, step-up, factors, recovery codes, sign-out). */
export const handler = staticEndpoint('page-security-action', (event) =>
  securityPost(
    db(),
    {
      cookies: event.cookies,
      origin: event.headers.origin,
      fetchSite: event.headers['sec-fetch-site'],
      fields: formFields(event),
      client: { ip: event.requestContext.http.sourceIp, userAgent: event.headers['user-agent'] },
    },
    new Date(),
  ),
);

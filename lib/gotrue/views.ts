import { providers } from '#lib/core/oauth-settings.ts';
import type { GoTrueSession, GoTrueSettings, GoTrueUser } from '#lib/wire/gotrue.ts';
import type { AuthSession, User } from '#lib/wire/responses.ts';
import { passwordIdentity } from '#lib/wire/views.ts';

/**
 * The user as GoTrue answers it: the API's user, without the dates that have no value yet (auth-js
 * types them optional, not null), and always with its identities (the API's user lists them only
 * once a provider is linked; before that the password is the only one).
 */
export const gotrueUser = (user: User): GoTrueUser => {
  const { email_confirmed_at, confirmed_at, last_sign_in_at, ...rest } = user;
  return {
    ...rest,
    identities: user.identities ?? [passwordIdentity(user)],
    ...(email_confirmed_at !== null ? { email_confirmed_at } : {}),
    ...(confirmed_at !== null ? { confirmed_at } : {}),
    ...(last_sign_in_at !== null ? { last_sign_in_at } : {}),
  };
};

/** The session as GoTrue answers it: the API's `data.session`, bare. */
export const gotrueSession = ({ session }: AuthSession): GoTrueSession => ({ ...session, user: gotrueUser(session.user) });

/** GET /auth/v1/settings: e-mail and password, the configured providers (docs/sso.md), confirmations on (docs/supabase.md). */
export const gotrueSettings = (): GoTrueSettings => ({
  external: { email: true, phone: false, anonymous_users: false, ...Object.fromEntries(providers().map((p) => [p.id, true])) },
  disable_signup: false,
  mailer_autoconfirm: false,
  phone_autoconfirm: false,
  sms_provider: '',
  saml_enabled: false,
});

/* global document, fetch, location, navigator, PublicKeyCredential, URLSearchParams */
// The pages' script (docs/pages.md): plain DOM, requests only to this origin's API. The mailed
// token is read from the URL here and sent only in a POST body; a GET never uses it up.
'use strict';

const main = document.querySelector('main');
const status = document.getElementById('status');
const token = new URLSearchParams(location.search).get('token') || '';
let session = null;

const say = (text, kind) => {
  status.textContent = text;
  status.className = kind || '';
};

/** The API's answer: `{ ok, status, data, error }`; the error is the envelope's (code, message, fields). */
const call = async (method, path, body) => {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (session) headers.authorization = `Token ${session.access_token}`;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    return { ok: false, error: { code: 'network', message: 'Roster could not be reached. Check your connection and try again.' } };
  }
  const json = await res.json().catch(() => ({}));
  return {
    ok: res.ok,
    status: res.status,
    data: json.data,
    error: json.error || { code: 'unknown', message: `Unexpected answer (${res.status}).` },
  };
};

/** The message, with each field's complaint (`password: must be at least 8 characters`). */
const describe = (error) => {
  const fields = error.fields ? Object.entries(error.fields).map(([name, text]) => `${name}: ${text}`) : [];
  return [error.message, ...fields].join(' ');
};

/** Runs `work` with `button` disabled, so a double click sends one request. */
const busy = async (button, work) => {
  button.disabled = true;
  try {
    await work();
  } finally {
    button.disabled = false;
  }
};

const value = (id) => document.getElementById(id).value;

const invite = () => {
  const uuid = main.dataset.invite;
  const answer = document.getElementById('answer');
  const resend = document.getElementById('resend');

  const signedIn = (data) => {
    session = data.session;
    document.getElementById('auth').hidden = true;
    answer.hidden = false;
    document.getElementById('signed-in').textContent = `Signed in as ${session.user.email}.`;
    say('Signed in. Accept or decline the invitation.');
    document.getElementById('accept').focus();
  };

  const submit = (form, path, body) =>
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      busy(form.querySelector('button'), async () => {
        say('Working…');
        const res = await call('POST', path, body());
        if (res.ok) signedIn(res.data);
        else say(describe(res.error), 'error');
      });
    });
  submit(document.getElementById('signin'), '/api/auth/signin', () => ({
    email: value('signin-email'),
    password: value('signin-password'),
  }));
  submit(document.getElementById('signup'), '/api/auth/signup', () => ({
    email: value('signup-email'),
    password: value('signup-password'),
    firstName: value('signup-first'),
    lastName: value('signup-last'),
    inviteToken: token,
  }));

  const respond = (button, verb, done) =>
    button.addEventListener('click', () =>
      busy(button, async () => {
        resend.hidden = true;
        const res = await call('POST', `/api/invites/${encodeURIComponent(uuid)}/${verb}`);
        if (res.ok) {
          answer.hidden = true;
          say(done, 'done');
          return;
        }
        say(describe(res.error), 'error');
        resend.hidden = res.error.code !== 'email_not_verified';
      }),
    );
  respond(document.getElementById('accept'), 'accept', `You joined ${main.dataset.team}.`);
  respond(document.getElementById('decline'), 'decline', 'You declined the invitation.');

  resend.addEventListener('click', () =>
    busy(resend, async () => {
      const res = await call('POST', '/api/auth/verify/resend', undefined);
      if (res.ok) say(`A confirmation e-mail is on its way to ${session.user.email}: follow its link, then come back here.`);
      else say(describe(res.error), 'error');
    }),
  );
};

const verify = () => {
  const button = document.getElementById('confirm');
  button.addEventListener('click', () =>
    busy(button, async () => {
      const res = await call('POST', '/api/auth/verify', { token });
      if (res.ok) {
        button.hidden = true;
        say(`Your address ${res.data.email} is confirmed.`, 'done');
      } else say(describe(res.error), 'error');
    }),
  );
};

const reset = () => {
  const form = document.getElementById('reset');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const password = value('reset-password');
    if (password !== value('reset-confirm')) {
      say('The two passwords differ: type the same one twice.', 'error');
      return;
    }
    busy(form.querySelector('button'), async () => {
      const res = await call('POST', '/api/auth/reset', { token, password });
      if (res.ok) {
        form.hidden = true;
        say(`Your new password is set, and you are signed in as ${res.data.session.user.email}.`, 'done');
      } else say(describe(res.error), 'error');
    });
  });
};

/**
 * /account/security: everything but passkeys is plain forms; these buttons use WebAuthn, then hand
 * the session the API answered to the page (`adopt`), which keeps it in its HttpOnly cookie.
 */
const security = () => {
  if (!globalThis.PublicKeyCredential?.parseCreationOptionsFromJSON) return;
  if (main.dataset.token) session = { access_token: main.dataset.token };

  /** `done`: what happened (signed-in, stepped-up, added); `codes`: a first factor's recovery codes, to show once. */
  const adopt = (accessToken, done, codes = []) => {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = '/account/security';
    for (const [name, v] of [
      ['action', 'adopt'],
      ['token', accessToken],
      ['done', done],
      ['codes', codes.join(' ')],
    ]) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = v;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
  };

  /** The browser's answer to the API's options, as the API takes it; null when the person cancelled. */
  const ceremony = async (webauthn) => {
    const publicKey =
      webauthn.type === 'create'
        ? PublicKeyCredential.parseCreationOptionsFromJSON(webauthn.credential_options.publicKey)
        : PublicKeyCredential.parseRequestOptionsFromJSON(webauthn.credential_options.publicKey);
    try {
      const credential = await (webauthn.type === 'create'
        ? navigator.credentials.create({ publicKey })
        : navigator.credentials.get({ publicKey }));
      return { type: webauthn.type, credential_response: credential.toJSON() };
    } catch {
      say('The passkey was not used (cancelled, or this device has none for this site).', 'error');
      return null;
    }
  };

  /** A factor's challenge, the browser's answer, the verify: the session is aal2 and its new token goes to the cookie. */
  const prove = async (factorId, done) => {
    const challenge = await call('POST', `/api/auth/factors/${factorId}/challenge`, {});
    if (!challenge.ok) return say(describe(challenge.error), 'error');
    const answer = await ceremony(challenge.data.webauthn);
    if (!answer) return undefined;
    const verified = await call('POST', `/api/auth/factors/${factorId}/verify`, { challenge_id: challenge.data.id, webauthn: answer });
    if (!verified.ok) return say(describe(verified.error), 'error');
    return adopt(verified.data.session.access_token, done, verified.data.recovery_codes);
  };

  const on = (id, work) => {
    const button = document.getElementById(id);
    if (!button) return;
    button.hidden = false;
    button.addEventListener('click', () => busy(button, work));
  };

  on('passkey-sign-in', async () => {
    const challenge = await call('POST', '/api/auth/passkeys/challenge');
    if (!challenge.ok) return say(describe(challenge.error), 'error');
    const answer = await ceremony(challenge.data.webauthn);
    if (!answer) return undefined;
    const signedIn = await call('POST', '/api/auth/passkeys/sign-in', { challenge_id: challenge.data.id, webauthn: answer });
    if (!signedIn.ok) return say(describe(signedIn.error), 'error');
    return adopt(signedIn.data.session.access_token, 'signed-in');
  });
  on('passkey-register', async () => {
    const enrolled = await call('POST', '/api/auth/factors', { factor_type: 'webauthn', friendly_name: 'Passkey' });
    if (!enrolled.ok) return say(describe(enrolled.error), 'error');
    return prove(enrolled.data.id, 'added');
  });
  on('passkey-step-up', () => prove(document.getElementById('passkey-step-up').dataset.factor, 'stepped-up'));
};

({ invite, verify, reset, security })[main.dataset.page]?.();

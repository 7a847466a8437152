// An OpenID Connect provider for the SSO tests: panva's oidc-provider (OpenID Certified), on loopback.
//   node tests/oidc/provider.mjs PORT    (or OIDC_PORT)
// OIDC_CLIENTS: JSON [{client_id, client_secret}]; OIDC_ACCOUNTS: JSON [{sub, email, email_verified, name}];
// OIDC_REDIRECT_URIS (optional): more redirect_uris for every client, separated by spaces.
// Prints `ready <issuer>` on stdout once it listens; everything else goes to stderr.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const port = Number(process.argv[2] ?? process.env.OIDC_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node tests/oidc/provider.mjs PORT (or OIDC_PORT)');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS ?? '[]');
const redirectUris = [
  'http://localhost/tracker/sso/callback', // the Flask test client's default host
  'http://127.0.0.1/tracker/sso/callback', // the live server of the browser tests, on any port (below)
  ...(process.env.OIDC_REDIRECT_URIS ?? '').split(/\s+/).filter(Boolean),
];

// A fresh signing key per run, rather than the library's published development keys.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'giro-test', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: JSON.parse(process.env.OIDC_CLIENTS ?? '[]').map(({ client_id, client_secret }) => ({
    client_id,
    client_secret,
    redirect_uris: redirectUris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    scope: 'openid email profile',
    // client_secret_post is accepted too: oidc-provider takes either way of sending a client secret.
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'RS256',
  })),
  jwks: { keys: [signingKey] },
  responseTypes: ['code'],
  pkce: { methods: ['S256'], required: () => true },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  // The app reads email and email_verified from the ID token, not from the userinfo endpoint.
  conformIdTokenClaims: false,
  async findAccount(ctx, sub) {
    const account = accounts.find((a) => a.sub === sub);
    return account && { accountId: sub, claims: () => ({ ...account }) };
  },
  // Lax, not the library's SameSite=None: browsers drop SameSite=None cookies that are not Secure (http).
  cookies: { keys: [randomBytes(32).toString('hex')], long: { sameSite: 'lax' }, short: { sameSite: 'lax' } },
  features: { devInteractions: { enabled: false } }, // interactions are answered below, with no page
});

// Redirect URIs: a registered loopback redirect_uri matches on any port, since the tests' servers take
// ports picked at run time. This is the rule of RFC 8252 §7.3, which oidc-provider applies to native
// clients only; it is extended to these web clients by overriding Client.prototype.redirectUriAllowed,
// as the library's recipes/redirect_uri_wildcards.md does (a test-only relaxation).
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const { redirectUriAllowed } = provider.Client.prototype;
provider.Client.prototype.redirectUriAllowed = function anyLoopbackPort(value) {
  if (redirectUriAllowed.call(this, value)) return true;
  let url;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) return false;
  url.port = '';
  return redirectUriAllowed.call(this, url.href);
};

// No login or consent page: the account is the one whose email is the login_hint (or the first one),
// and consent is given for what the client asked, with a Grant as in the library's example.
async function interact(req, res) {
  const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
  if (prompt.name === 'login') {
    const hint = params.login_hint?.toLowerCase();
    const account = hint === undefined ? accounts[0] : accounts.find((a) => a.email.toLowerCase() === hint);
    const result = account
      ? { login: { accountId: account.sub } }
      : { error: 'access_denied', error_description: `no test account for login_hint ${params.login_hint}` };
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes = {} } = prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes)) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const result = { consent: { grantId: await grant.save() } };
  return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

// Each authorization request starts with no provider session, as from a new browser, so that login_hint
// always picks the account: a session left in a cookie jar by an earlier login would answer instead, and
// changing account within a session goes through an HTML logout form.
async function forgetSession(req) {
  const sessionId = /(?:^|;\s*)_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
  if (sessionId) await (await provider.Session.find(sessionId))?.destroy();
}

const callback = provider.callback();
const server = http.createServer(async (req, res) => {
  try {
    const { pathname } = new URL(req.url, issuer);
    if (pathname.startsWith('/interaction/')) return await interact(req, res);
    if (pathname === '/auth') await forgetSession(req);
    return callback(req, res);
  } catch (err) {
    console.error(`${req.method} ${req.url} failed:`, err);
    res.statusCode = 500;
    res.end(String(err.message));
  }
});

provider.on('server_error', (ctx, err) => console.error('server_error:', err));
server.on('error', (err) => {
  console.error(`cannot listen on ${issuer}:`, err.message);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));

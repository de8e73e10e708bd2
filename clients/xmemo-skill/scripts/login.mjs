// login: OAuth 2.1 authorization code + PKCE (S256) with a loopback redirect (RFC 8252), against
// the server's own authorization server (docs/oauth.md): metadata (RFC 8414), dynamic
// registration (RFC 7591), then the code exchange. The credentials file (0600) keeps the refresh
// token; refreshedCredentials renews the access token shortly before it expires (every refresh
// rotates the refresh token, so the file is rewritten each time).

import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { EXIT, ExitError } from './lib.mjs';

const RENEW_MARGIN_SECONDS = 60;
// What the bridge's commands need: recall and sync read, push and lint write.
export const DEFAULT_SCOPES = ['skills:read', 'skills:write'];
const LOGIN_TIMEOUT_MS = 5 * 60 * 1000;

const base64url = (bytes) => Buffer.from(bytes).toString('base64url');

export function pkcePair() {
  const verifier = base64url(randomBytes(32));
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

export function writeCredentials(file, credentials) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temp, 0o600); // whatever the umask
  fs.renameSync(temp, file);
}

export function readCredentials(file) {
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) {
    throw new ExitError(EXIT.USAGE, `${file} is readable by others (mode ${mode.toString(8)}): chmod 600 it or run login again`);
  }
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ExitError(EXIT.USAGE, `${file} is not valid JSON: ${error.message}`);
  }
}

async function postForm(url, fields) {
  let response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body: new URLSearchParams(fields) });
  } catch (error) {
    throw new ExitError(EXIT.SERVER, `NETWORK_ERROR: ${url} did not answer (${error.cause?.code ?? error.message})`);
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new ExitError(EXIT.SERVER, `${(data.error ?? `HTTP_${response.status}`).toUpperCase()}: ${data.error_description ?? 'the token endpoint refused'}`);
  return data;
}

function fromTokenAnswer(previous, answer, now = Date.now()) {
  return {
    ...previous,
    access_token: answer.access_token,
    refresh_token: answer.refresh_token ?? previous.refresh_token,
    expires_at: Math.floor(now / 1000) + Number(answer.expires_in ?? 3600),
  };
}

export async function refreshedCredentials(file, now = Date.now()) {
  const credentials = readCredentials(file);
  if (!credentials.access_token || !credentials.url) throw new ExitError(EXIT.USAGE, `${file} holds no credentials: run login`);
  if (!credentials.refresh_token || Number(credentials.expires_at ?? 0) - RENEW_MARGIN_SECONDS > now / 1000) {
    return credentials;
  }
  const answer = await postForm(credentials.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: credentials.refresh_token,
    client_id: credentials.client_id,
  });
  const renewed = fromTokenAnswer(credentials, answer, now);
  writeCredentials(file, renewed);
  return renewed;
}

async function getJson(url) {
  let response;
  try {
    response = await fetch(url, { headers: { Accept: 'application/json' } });
  } catch (error) {
    throw new ExitError(EXIT.SERVER, `NETWORK_ERROR: ${url} did not answer (${error.cause?.code ?? error.message})`);
  }
  if (!response.ok) throw new ExitError(EXIT.SERVER, `HTTP_${response.status}: ${url}`);
  return response.json();
}

function waitForCode(server, state) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new ExitError(EXIT.SERVER, 'LOGIN_TIMEOUT: no answer from the browser in 5 minutes')), LOGIN_TIMEOUT_MS);
    server.on('request', (request, response) => {
      const url = new URL(request.url, 'http://127.0.0.1');
      if (url.pathname !== '/callback') {
        response.writeHead(404).end();
        return;
      }
      const done = (text) => response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(text);
      clearTimeout(timer);
      if (url.searchParams.get('state') !== state) {
        done('This answer does not belong to this login; run it again.');
        reject(new ExitError(EXIT.SERVER, 'STATE_MISMATCH: the authorization answer was not for this login'));
      } else if (url.searchParams.get('error')) {
        done('Access was not granted. You can close this tab.');
        reject(new ExitError(EXIT.SERVER, `${url.searchParams.get('error').toUpperCase()}: access was not granted`));
      } else {
        done('Signed in: you can close this tab and go back to the terminal.');
        resolve({ code: url.searchParams.get('code'), iss: url.searchParams.get('iss') });
      }
    });
  });
}

// The scopes to ask for: each --scope may name several (spaces or commas); none → the default.
export function requestedScopes(values = []) {
  const named = values.flatMap((value) => value.split(/[\s,]+/)).filter(Boolean);
  return named.length ? [...new Set(named)] : DEFAULT_SCOPES;
}

export async function login({ url, scopes, file, say, openUrl = null }) {
  if (!url) throw new ExitError(EXIT.USAGE, 'login: give --url URL (or set XMEMO_URL)');
  const wanted = requestedScopes(scopes);
  const origin = new URL(url).origin;
  const metadata = await getJson(`${origin}/.well-known/oauth-authorization-server`);
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const redirectUri = `http://127.0.0.1:${server.address().port}/callback`;
    const registered = await (async () => {
      const response = await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ client_name: '@xmemo/skill', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
      });
      const data = await response.json().catch(() => ({}));
      if (!response.ok) throw new ExitError(EXIT.SERVER, `${(data.error ?? `HTTP_${response.status}`).toUpperCase()}: registration refused`);
      return data;
    })();
    const { verifier, challenge } = pkcePair();
    const state = base64url(randomBytes(16));
    const authorize = new URL(metadata.authorization_endpoint);
    for (const [key, value] of Object.entries({ response_type: 'code', client_id: registered.client_id, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state, resource: origin, scope: wanted.join(' ') })) {
      authorize.searchParams.set(key, value);
    }
    const answer = waitForCode(server, state);
    say(`Open this address in a browser and approve access:\n\n  ${authorize}\n`);
    if (openUrl) openUrl(authorize.toString());
    const { code, iss } = await answer;
    if (iss && metadata.issuer && iss !== metadata.issuer) throw new ExitError(EXIT.SERVER, 'ISSUER_MISMATCH: the answer came from another authorization server');
    const tokens = await postForm(metadata.token_endpoint, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: registered.client_id, code_verifier: verifier });
    writeCredentials(file, fromTokenAnswer({ url: origin, client_id: registered.client_id, token_endpoint: metadata.token_endpoint }, tokens));
    say(`Signed in to ${origin}; credentials saved in ${file} (mode 0600).`);
    const granted = (tokens.scope ?? '').split(' ').filter(Boolean);
    const missing = wanted.filter((scope) => granted.length && !granted.includes(scope));
    if (missing.length) say(`Not granted: ${missing.join(' ')} (the commands that need it will be refused; run login again to grant it).`);
    return EXIT.OK;
  } finally {
    server.close();
  }
}

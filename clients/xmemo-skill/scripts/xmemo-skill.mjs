#!/usr/bin/env node
// @xmemo/skill — the agent-side bridge to XMemo Cloud Skills (SPEC §17). Node >= 20, built-ins
// only. It speaks the public REST API; the token comes from XMEMO_TOKEN or the credentials file
// that `login` writes, never from the command line, and is never printed.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import {
  CACHE_FILE,
  EXIT,
  ExitError,
  JUNK_FILES,
  JUNK_FOLDERS,
  LOCK_FILE,
  SKILL_MD,
  canonicalHash,
  canonicalJson,
  componentType,
  filesOfListing,
  isText,
  parseFrontmatter,
  readJson,
  sameFiles,
  sha256Hex,
  splitIdentity,
  splitSkillMd,
  unsafeName,
} from './lib.mjs';
import { login, refreshedCredentials } from './login.mjs';

const USAGE = `usage: xmemo-skill <command> [options]

  search QUERY [--workspace WS] [--limit N] [--json]
  recall SLUG [--workspace WS] [--revision R] [--label L] [--arguments STR] [--json]
  resource SLUG PATH --revision R [--json]
  sync --dir DIR [--workspace WS]... [--label L] [--check] [--force] [--prune] [--allow-flagged]
  push DIR... --workspace WS [--dry-run] [--message M] [--acknowledge-secrets]
  lint DIR... [--workspace WS]
  outcome SLUG --revision R success|partial|failure [--note N] [--json]
  login [--url URL] [--scope SCOPE]...   (default: skills:read skills:write)

Configuration: XMEMO_URL and XMEMO_TOKEN, else the credentials file written by login
($XDG_CONFIG_HOME/xmemo/credentials.json or ~/.config/xmemo/credentials.json).
Exit codes: 0 ok, 1 check/lint failed, 2 usage, 3 local edits in the way, 4 integrity failure,
5 server or authentication error.
sync leaves out a skill whose revision's scan says block (unless an owner overrode it) and names
it; --allow-flagged writes it anyway. lint prints the scan's findings. push refuses content
holding a live secret (SECRET_DETECTED, naming path and line); --acknowledge-secrets stores it
anyway (audited).`;

const COMMANDS = {
  search: { options: { workspace: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } }, positionals: [1, 1] },
  recall: {
    options: { workspace: { type: 'string' }, revision: { type: 'string' }, label: { type: 'string' }, arguments: { type: 'string' }, json: { type: 'boolean' } },
    positionals: [1, 1],
  },
  resource: { options: { revision: { type: 'string' }, json: { type: 'boolean' } }, positionals: [2, 2] },
  sync: {
    options: { dir: { type: 'string' }, workspace: { type: 'string', multiple: true }, label: { type: 'string' }, check: { type: 'boolean' }, force: { type: 'boolean' }, prune: { type: 'boolean' }, 'allow-flagged': { type: 'boolean' } },
    positionals: [0, 0],
  },
  push: {
    options: { workspace: { type: 'string' }, 'dry-run': { type: 'boolean' }, message: { type: 'string' }, 'acknowledge-secrets': { type: 'boolean' } },
    positionals: [1, Infinity],
  },
  lint: { options: { workspace: { type: 'string' } }, positionals: [1, Infinity] },
  outcome: { options: { revision: { type: 'string' }, note: { type: 'string' }, json: { type: 'boolean' } }, positionals: [2, 2] },
  login: { options: { url: { type: 'string' }, scope: { type: 'string', multiple: true } }, positionals: [0, 0] },
};

// --- arguments -----------------------------------------------------------------------------------

const HELP = new Set(['--help', '-h']);
const OUTCOMES = ['success', 'partial', 'failure'];

export function parseCommand(argv) {
  const [command, ...rest] = argv;
  if (!command) throw new ExitError(EXIT.USAGE, USAGE);
  if (HELP.has(command) || command === 'help' || (COMMANDS[command] && rest.some((a) => HELP.has(a)))) return { command: 'help', args: [], options: {} };
  const spec = COMMANDS[command];
  if (!spec) throw new ExitError(EXIT.USAGE, `unknown command '${command}'\n\n${USAGE}`);
  if (rest.some((a) => /^--token(=|$)/.test(a))) {
    throw new ExitError(EXIT.USAGE, 'a token is never taken from the command line: set XMEMO_TOKEN or run login');
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: spec.options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ExitError(EXIT.USAGE, `${command}: ${error.message}\n\n${USAGE}`);
  }
  const [min, max] = spec.positionals;
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    throw new ExitError(EXIT.USAGE, `${command}: wrong number of arguments\n\n${USAGE}`);
  }
  const { values } = parsed;
  if (command === 'outcome') {
    if (!values.revision) throw new ExitError(EXIT.USAGE, 'outcome: --revision R is required (the revision_id recall printed)');
    if (!OUTCOMES.includes(parsed.positionals[1])) throw new ExitError(EXIT.USAGE, `outcome: say ${OUTCOMES.join(', ')}`);
  }
  if (command === 'resource' && !values.revision) {
    throw new ExitError(EXIT.USAGE, 'resource: --revision R is required (the revision_id recall printed)');
  }
  if (command === 'sync' && !values.dir) throw new ExitError(EXIT.USAGE, 'sync: --dir DIR is required');
  if (command === 'push' && !values.workspace) throw new ExitError(EXIT.USAGE, 'push: --workspace WS is required');
  if (values.limit !== undefined && !/^\d+$/.test(values.limit)) {
    throw new ExitError(EXIT.USAGE, 'search: --limit must be a whole number');
  }
  if (values.label !== undefined && values.revision !== undefined) {
    throw new ExitError(EXIT.USAGE, `${command}: --label and --revision each name a revision; give one`);
  }
  return { command, args: parsed.positionals, options: values };
}

// --- configuration and requests ---------------------------------------------------------------

export function credentialsPath(env = process.env) {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'xmemo', 'credentials.json');
}

// The server URL a download from the console's Connect page carries (never a token).
export function bundledUrl() {
  const file = new URL('../config.json', import.meta.url);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')).url || undefined;
  } catch {
    return undefined;
  }
}

async function configuration(env = process.env) {
  if (env.XMEMO_TOKEN) {
    const url = env.XMEMO_URL || bundledUrl();
    if (!url) throw new ExitError(EXIT.USAGE, 'XMEMO_TOKEN is set but XMEMO_URL is not');
    return { url: url.replace(/\/+$/, ''), token: env.XMEMO_TOKEN };
  }
  const file = credentialsPath(env);
  if (!fs.existsSync(file)) {
    throw new ExitError(EXIT.SERVER, 'AUTHENTICATION_REQUIRED: set XMEMO_URL and XMEMO_TOKEN, or run `xmemo-skill login`');
  }
  const credentials = await refreshedCredentials(file);
  return { url: (env.XMEMO_URL || credentials.url).replace(/\/+$/, ''), token: credentials.access_token };
}

class Client {
  constructor({ url, token }) {
    this.url = url;
    this.token = token;
    this.requests = 0;
  }

  async request(method, route, { query, body, headers } = {}) {
    const target = new URL(this.url + route);
    for (const [key, value] of query ?? []) if (value !== undefined) target.searchParams.append(key, value);
    this.requests += 1;
    let response;
    try {
      response = await fetch(target, {
        method,
        headers: {
          Authorization: `Bearer ${this.token}`,
          Accept: 'application/json',
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : canonicalJson(body, false),
      });
    } catch (error) {
      throw new ExitError(EXIT.SERVER, `NETWORK_ERROR: ${this.url} did not answer (${error.cause?.code ?? error.message})`);
    }
    const text = await response.text();
    if (response.status === 304) return { status: 304, headers: response.headers, text: '' };
    if (response.status >= 400) {
      let error = {};
      try {
        error = JSON.parse(text).error ?? {};
      } catch {
        // not the envelope: name the status
      }
      const failure = new ExitError(EXIT.SERVER, `${error.code ?? `HTTP_${response.status}`}: ${error.message ?? text.slice(0, 200)}`);
      failure.status = response.status;
      failure.error = error;
      throw failure;
    }
    return { status: response.status, headers: response.headers, text };
  }

  async json(method, route, options) {
    const answer = await this.request(method, route, options);
    return { ...answer, data: answer.text ? readJson(answer.text) : null };
  }
}

const out = (text) => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

// --- search, recall, resource ---------------------------------------------------------------------

async function search(client, [query], options) {
  const answer = await client.json('GET', '/v1/recall', { query: [['query', query], ['workspace', options.workspace], ['limit', options.limit]] });
  if (options.json) return out(answer.text);
  const results = answer.data.data.results;
  if (!results.length) return out(`No skill matches "${query}".`);
  const lines = results.map((r, i) => `${i + 1}. ${r.workspace}/${r.slug} — ${r.name}: ${r.description}`);
  out(`${lines.join('\n')}\n\nNext: xmemo-skill recall WORKSPACE/SLUG`);
}

async function recall(client, [slug], options) {
  const answer = await client.json('GET', '/v1/recall', {
    query: [['slug', slug], ['workspace', options.workspace], ['revision_id', options.revision], ['label', options.label], ['arguments', options.arguments]],
  });
  if (options.json) return out(answer.text);
  const d = answer.data.data;
  const resources = d.resources.map((r) => `- ${r.logical_path} (${r.type}, ${r.size} bytes)`);
  out(
    [
      d.rendered_body ?? d.instruction_body,
      '---',
      `skill: ${d.workspace}/${d.slug} — ${d.name}`,
      `revision_id: ${d.revision_id} (revision ${d.revision_number}, ${d.state}, ${d.resolved_by})`,
      resources.length
        ? `resources (read one with: xmemo-skill resource ${d.workspace}/${d.slug} PATH --revision ${d.revision_id}):\n${resources.join('\n')}`
        : 'resources: none',
    ].join('\n'),
  );
}

async function resource(client, [slug, logicalPath], options) {
  const answer = await client.json('GET', '/v1/recall', {
    query: [['slug', slug], ['revision_id', options.revision], ['resource', logicalPath]],
  });
  if (options.json) return out(answer.text);
  const d = answer.data.data;
  const bytes = d.encoding === 'base64' ? Buffer.from(d.content, 'base64') : Buffer.from(d.content, 'utf8');
  if (sha256Hex(bytes) !== d.content_hash) throw new ExitError(EXIT.INTEGRITY, `${logicalPath}: the bytes do not match content_hash`);
  process.stdout.write(bytes);
}

// --- sync ---------------------------------------------------------------------------------------

function readJsonFile(file, fallback) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return fallback;
    throw new ExitError(EXIT.USAGE, `${file} is not valid JSON: ${error.message}`);
  }
}

function writeJsonFile(file, value) {
  const temp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
  fs.renameSync(temp, file);
}

const exists = (file) => {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
};
const within = (root, real) => real === root || real.startsWith(root + path.sep);

// Whether DIR/rel stays inside DIR with every link on the way followed (as far as it exists).
export function resolvesInside(dir, rel) {
  if (!exists(dir)) return true;
  const root = fs.realpathSync(dir);
  let probe = path.join(dir, rel);
  while (!exists(probe)) probe = path.dirname(probe);
  try {
    return within(root, fs.realpathSync(probe));
  } catch {
    return false; // a dangling link
  }
}

// Every file of a skill folder as {relative path: sha256}; null when the folder does not exist.
// A link is never followed out of the folder: `follow` (push, lint) reads a link that stays
// inside as what it points at and refuses any other (exit 2, naming it); otherwise (sync) a
// link counts as a file sync did not write.
export function folderFiles(folder, { follow = false } = {}) {
  if (!fs.existsSync(folder)) return null;
  const root = fs.realpathSync(folder);
  const files = {};
  const walk = (dir, prefix, open) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      const full = path.join(dir, entry.name);
      let real = full;
      let isDirectory = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        if (!follow) {
          files[rel] = `link:${fs.readlinkSync(full)}`;
          continue;
        }
        const refuse = (why) => new ExitError(EXIT.USAGE, `${folder}: ${rel} is a link ${why}; refused (copy the file into the skill if it belongs there)`);
        try {
          real = fs.realpathSync(full);
        } catch {
          throw refuse('to nothing');
        }
        if (!within(root, real)) throw refuse(`out of the skill folder (to ${real})`);
        isDirectory = fs.statSync(real).isDirectory();
        if (isDirectory && open.has(real)) throw refuse('to a folder that holds it');
      }
      if (isDirectory) {
        if (!JUNK_FOLDERS.has(entry.name)) walk(real, rel, new Set([...open, fs.realpathSync(real)]));
      } else if (!JUNK_FILES.has(entry.name)) {
        files[rel] = sha256Hex(fs.readFileSync(real));
      }
    }
  };
  walk(folder, '', new Set([root]));
  return files;
}

// Why a slug (or one of its paths) read from the server or the lock may not touch DIR, or null.
function refusal(dir, slug, paths = []) {
  const why = unsafeName(slug, { slug: true });
  if (why) return `the slug ${JSON.stringify(slug)} ${why}`;
  if (!resolvesInside(dir, slug)) return `${slug}: its folder resolves outside ${dir} (through a link)`;
  for (const p of paths) {
    const bad = unsafeName(p);
    if (bad) return `${slug}: the path ${JSON.stringify(p)} ${bad}`;
  }
  return null;
}

export function verifyBundle(bundle, entry) {
  const problem = (what) => new ExitError(EXIT.INTEGRITY, `${entry.slug}: ${what}; nothing was written`);
  if (bundle.revision_id !== entry.revision_id) throw problem('the bundle is of another revision');
  const files = bundle.files.map((f) => ({ ...f, bytes: Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8') }));
  for (const f of files) {
    if (sha256Hex(f.bytes) !== f.sha256) throw problem(`${f.path} does not match its sha256`);
  }
  if (!sameFiles(Object.fromEntries(files.map((f) => [f.path, f.sha256])), filesOfListing(entry))) {
    throw problem('the bundle does not hold the files the sync listing names');
  }
  const skillMd = files.find((f) => f.path === SKILL_MD);
  if (!skillMd || !skillMd.bytes.toString('utf8').endsWith(`---\n${bundle.instruction_body}`)) {
    throw problem('SKILL.md does not end with the instruction body');
  }
  const computed = canonicalHash({
    name: bundle.name,
    description: bundle.description,
    frontmatter: bundle.frontmatter,
    instructionBody: bundle.instruction_body,
    components: files.filter((f) => f !== skillMd),
  });
  if (computed !== bundle.canonical_hash || computed !== entry.canonical_hash) {
    throw problem(`the content hashes to ${computed}, not ${entry.canonical_hash}`);
  }
  return files;
}

function writeSkill(dir, slug, files) {
  const target = path.join(dir, slug);
  const fresh = path.join(dir, `.${slug}.xmemo-new`);
  const old = path.join(dir, `.${slug}.xmemo-old`);
  fs.rmSync(fresh, { recursive: true, force: true });
  for (const f of files) {
    const file = path.join(fresh, ...f.path.split('/'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, f.bytes, { mode: f.type === 'script' ? 0o755 : 0o644 });
  }
  fs.rmSync(old, { recursive: true, force: true });
  if (fs.existsSync(target)) fs.renameSync(target, old);
  fs.renameSync(fresh, target);
  fs.rmSync(old, { recursive: true, force: true });
}

// A slug served by several workspaces is written once: from the first --workspace named (else
// the first in the listing's order); the others are reported and skipped.
function firstOfEachSlug(listing, named, report) {
  const rank = (ws) => (named.includes(ws) ? named.indexOf(ws) : named.length);
  const chosen = new Map();
  for (const entry of listing) {
    const held = chosen.get(entry.slug);
    if (!held || rank(entry.workspace) < rank(held.workspace)) chosen.set(entry.slug, entry);
  }
  for (const entry of listing) {
    const kept = chosen.get(entry.slug);
    if (kept !== entry) report(`${entry.slug}: also served by ${entry.workspace}; skipped (written from ${kept.workspace})`);
  }
  return [...chosen.values()];
}

// Whether a bundle's scan (SPEC §21) keeps it out of sync: `block` (an owner's override lets a
// revision through the server's gate; the agent's copy still asks for --allow-flagged).
const blocked = (scan) => scan?.verdict === 'block';

// Each scan finding as `PREFIX: path:line: severity category: message`.
function findingLines(prefix, findings) {
  return (findings ?? []).map((f) => `${prefix}: ${f.path}:${f.line}: ${f.severity} ${f.category}: ${f.message}`);
}

async function sync(client, _args, options, report = out) {
  const dir = path.resolve(options.dir);
  const workspaces = [...(options.workspace ?? [])].sort();
  const lockPath = path.join(dir, LOCK_FILE);
  const cachePath = path.join(dir, CACHE_FILE);
  const lock = readJsonFile(lockPath, { version: 1, server: client.url, skills: {} });
  if (lock.version !== 1) throw new ExitError(EXIT.USAGE, `${lockPath}: version ${lock.version} is not 1`);
  const cache = readJsonFile(cachePath, {});
  const label = options.label ?? null;
  const sameQuery = cache.server === client.url && JSON.stringify(cache.workspaces) === JSON.stringify(workspaces) && (cache.label ?? null) === label;

  const answer = await client.json('GET', '/v1/sync', {
    query: [...workspaces.map((ws) => ['workspace', ws]), ['label', label ?? undefined]],
    headers: sameQuery && cache.etag ? { 'If-None-Match': cache.etag } : {},
  });
  const listing = answer.status === 304 ? cache.listing : answer.data.skills;

  let code = EXIT.OK;
  const unsafe = (why) => {
    report(`${why}: refused as unsafe; nothing written or removed for it`);
    code = EXIT.INTEGRITY;
  };
  const safe = listing.filter((entry) => {
    const why = refusal(dir, entry.slug, entry.files.map((f) => f.path));
    if (why) unsafe(why);
    return !why;
  });
  const plan = [];
  const nextLock = { version: 1, server: client.url, skills: { ...lock.skills } };
  for (const entry of firstOfEachSlug(safe, options.workspace ?? [], report)) {
    const want = filesOfListing(entry);
    const have = folderFiles(path.join(dir, entry.slug));
    const locked = lock.skills[entry.slug];
    const lockEntry = { workspace: entry.workspace, skill_id: entry.skill_id, revision_id: entry.revision_id, canonical_hash: entry.canonical_hash, files: want };
    if (have && sameFiles(have, want)) {
      nextLock.skills[entry.slug] = lockEntry;
      continue;
    }
    const edited = have && !(locked && sameFiles(have, locked.files));
    if (edited && !options.force) {
      report(`${entry.slug}: edited by hand (or not written by sync); left untouched — use --force to overwrite`);
      code = Math.max(code, EXIT.LOCAL_EDITS);
      continue;
    }
    plan.push({ entry, lockEntry, verb: have ? 'updated' : 'added' });
  }
  const served = new Set(listing.map((e) => e.slug));
  const prune = [];
  for (const [slug, locked] of Object.entries(lock.skills)) {
    if (served.has(slug)) continue;
    const why = refusal(dir, slug);
    if (why) {
      unsafe(`${LOCK_FILE}: ${why}`);
      continue;
    }
    if (!options.prune) {
      report(`${slug}: no longer served; kept (use --prune to remove it)`);
      continue;
    }
    const have = folderFiles(path.join(dir, slug));
    if (have && !sameFiles(have, locked.files) && !options.force) {
      report(`${slug}: no longer served but edited by hand; left untouched — use --force to remove it`);
      code = Math.max(code, EXIT.LOCAL_EDITS);
      continue;
    }
    prune.push(slug);
  }

  // Every download is verified before anything is written: a tampered one writes nothing. A
  // revision whose scan blocks it is left out unless --allow-flagged.
  const verified = [];
  for (const item of plan) {
    const bundle = (await client.json('GET', `/v1/revisions/${encodeURIComponent(item.entry.revision_id)}/bundle`)).data;
    const files = verifyBundle(bundle, item.entry);
    if (blocked(bundle.scan) && !options['allow-flagged']) {
      report(`${item.entry.slug}: its scan says block (revision ${item.entry.revision_number}); skipped — use --allow-flagged to write it`);
      for (const line of findingLines(item.entry.slug, bundle.scan.findings)) report(line);
      continue;
    }
    verified.push({ ...item, files });
  }

  if (options.check) {
    for (const { entry, verb } of verified) report(`${entry.slug}: would be ${verb} (revision ${entry.revision_number})`);
    for (const slug of prune) report(`${slug}: would be removed`);
    const differs = verified.length > 0 || prune.length > 0 || code !== EXIT.OK;
    if (!differs) report('up to date');
    return code === EXIT.INTEGRITY ? code : differs ? EXIT.FAILED : EXIT.OK;
  }

  fs.mkdirSync(dir, { recursive: true });
  for (const { entry, lockEntry, verb, files } of verified) {
    writeSkill(dir, entry.slug, files);
    nextLock.skills[entry.slug] = lockEntry;
    report(`${entry.slug}: ${verb} (revision ${entry.revision_number})`);
  }
  for (const slug of prune) {
    fs.rmSync(path.join(dir, slug), { recursive: true, force: true });
    delete nextLock.skills[slug];
    report(`${slug}: removed`);
  }
  nextLock.skills = Object.fromEntries(Object.entries(nextLock.skills).sort(([a], [b]) => (a < b ? -1 : 1)));
  if (JSON.stringify(nextLock) !== JSON.stringify(lock)) writeJsonFile(lockPath, nextLock);
  if (answer.status !== 304) {
    writeJsonFile(cachePath, { server: client.url, workspaces, label, etag: answer.headers.get('etag'), listing });
  }
  if (!verified.length && !prune.length && code === EXIT.OK) report('up to date');
  return code;
}

// --- push and lint -------------------------------------------------------------------------------

// A folder as a save body, and whether its SKILL.md's own `name` is the folder's (the Agent
// Skills rule holds, so a display name beside it is deliberate: no NAME_NOT_FOLDER advice).
export function readSkillFolder(folder) {
  const slug = path.basename(path.resolve(folder));
  const skillMdPath = path.join(folder, SKILL_MD);
  if (!fs.existsSync(skillMdPath)) throw new ExitError(EXIT.USAGE, `${folder}: no ${SKILL_MD}`);
  const files = folderFiles(folder, { follow: true });
  const text = fs.readFileSync(skillMdPath, 'utf8');
  const { yaml, body } = splitSkillMd(text);
  const frontmatter = parseFrontmatter(yaml);
  const { name, description, rest } = splitIdentity(frontmatter);
  const components = [];
  for (const rel of Object.keys(files).sort()) {
    if (rel === SKILL_MD || rel === 'capsule.json') continue;
    const bytes = fs.readFileSync(path.join(folder, ...rel.split('/')));
    const text = isText(bytes);
    components.push({
      logical_path: rel,
      type: componentType(rel, bytes),
      content: text ? bytes.toString('utf8') : bytes.toString('base64'),
      encoding: text ? 'utf-8' : 'base64',
    });
  }
  const asText = (value) => (value === null || value === undefined ? '' : String(value));
  return {
    body: { slug, name: asText(name), description: asText(description), instruction_body: body, frontmatter: rest, components },
    namesFolder: frontmatter.name === slug,
  };
}

const advice = (warnings, namesFolder) => (warnings ?? []).filter((w) => !(namesFolder && w.code === 'NAME_NOT_FOLDER'));

function printProblems(folder, answer) {
  for (const e of answer.errors) out(`${folder}: error ${e.code}${e.field ? ` (${e.field})` : ''}: ${e.message}`);
  for (const w of answer.warnings) out(`${folder}: warning ${w.code}${w.field ? ` (${w.field})` : ''}: ${w.message}`);
}

async function lintFolder(client, folder, workspace, extra = {}) {
  const { body, namesFolder } = readSkillFolder(folder);
  const payload = { ...body, ...(workspace ? { workspace } : {}), ...extra };
  try {
    const answer = (await client.json('POST', '/v1/skills/lint', { body: payload })).data;
    return { ...answer, warnings: advice(answer.warnings, namesFolder) };
  } catch (error) {
    // A body of the wrong shape is a lint failure of that folder, not a server failure.
    if (error.status === 400) return { errors: [{ code: error.error.code, field: String(error.error.details?.field ?? ''), message: error.error.message }], warnings: [] };
    throw error;
  }
}

// The trigger checks of a folder's evals/triggers.json against what the workspace serves.
export function triggerLines(folder, checks) {
  if (!checks) return [];
  const share = (part, whole) => `${part}/${whole}`;
  const lines = [
    `${folder}: triggers: picked first for ${share(checks.hits_at_1, checks.should_trigger)} of its tasks, in the top 3 for ${share(checks.hits_at_3, checks.should_trigger)}` +
      (checks.should_not_trigger ? `; false triggers ${share(checks.false_triggers, checks.should_not_trigger)}` : '') +
      ` (over ${checks.served_set?.skills ?? '?'} served skills)`,
  ];
  for (const task of checks.tasks) {
    const missed = task.expected === 'trigger' ? task.rank !== 1 : task.rank === 1;
    if (missed) lines.push(`${folder}:   ${task.expected === 'trigger' ? 'missed' : 'false trigger'}: "${task.task}" -> ${task.winner ?? 'nothing'}${task.rank ? ` (rank ${task.rank})` : ''}`);
  }
  for (const c of checks.collisions.wins_from) lines.push(`${folder}:   now wins ${c.tasks.length} of ${c.slug}'s tasks`);
  for (const c of checks.collisions.outranked_by) lines.push(`${folder}:   outranked by ${c.slug} on ${c.tasks.length} of its tasks`);
  return lines;
}

async function outcome(client, [slug, result], options) {
  const body = { outcome: result, ...(options.note !== undefined ? { note: options.note } : {}) };
  const answer = (await client.json('POST', `/v1/revisions/${encodeURIComponent(options.revision)}/outcomes`, { body })).data;
  out(options.json ? JSON.stringify(answer) : `${slug}: reported ${answer.outcome} for revision ${answer.revision_id} (one report a day counts)`);
  return EXIT.OK;
}

async function lint(client, folders, options) {
  let code = EXIT.OK;
  for (const folder of folders) {
    const answer = await lintFolder(client, folder, options.workspace);
    printProblems(folder, answer);
    if (answer.scan) {
      out(`${folder}: scan: ${answer.scan.verdict}`);
      for (const line of findingLines(folder, answer.scan.findings)) out(line);
    }
    for (const line of triggerLines(folder, answer.triggers)) out(line);
    if (answer.errors.length) code = EXIT.FAILED;
    else out(`${folder}: ok${answer.approx_tokens ? ` (about ${answer.approx_tokens.level1} tokens at Level 1)` : ''}`);
  }
  return code;
}

// Push protection's refusal (SPEC §21) naming each secret's path and line, and the way past it.
function secretRefusal(folder, error) {
  const details = error.error.details ?? {};
  const where = (details.secrets?.length ? details.secrets : [details]).map((s) => `${s.path}:${s.line}`).join(', ');
  return new ExitError(EXIT.SERVER, `SECRET_DETECTED: ${folder}: a live secret at ${where}; nothing stored (remove it, or push with --acknowledge-secrets to store it anyway)`);
}

async function push(client, folders, options) {
  let code = EXIT.OK;
  const acknowledge = options['acknowledge-secrets'] ? { acknowledge_secrets: true } : {};
  for (const folder of folders) {
    if (options['dry-run']) {
      const answer = await lintFolder(client, folder, options.workspace, { intent: 'publish', ...acknowledge });
      printProblems(folder, answer);
      if (answer.errors.length) code = EXIT.FAILED;
      else out(`${folder}: would be saved (dry run, nothing stored)`);
      continue;
    }
    const { body, namesFolder } = readSkillFolder(folder);
    const payload = { ...body, workspace: options.workspace, intent: 'publish', ...(options.message ? { message: options.message } : {}), ...acknowledge };
    const answer = (await client.json('POST', '/v1/skills/save', { body: payload }).catch((error) => {
      throw error.error?.code === 'SECRET_DETECTED' ? secretRefusal(folder, error) : error;
    })).data;
    for (const w of advice(answer.warnings, namesFolder)) out(`${folder}: warning ${w.code}: ${w.message}`);
    out(
      answer.created
        ? `${folder}: saved ${options.workspace}/${payload.slug} revision ${answer.revision_number} (${answer.state}) ${answer.revision_id}`
        : `${folder}: unchanged (revision ${answer.revision_number}, ${answer.state})`,
    );
  }
  return code;
}

// --- main --------------------------------------------------------------------------------------

export async function main(argv, env = process.env) {
  const { command, args, options } = parseCommand(argv);
  if (command === 'help') {
    out(USAGE);
    return EXIT.OK;
  }
  if (command === 'login') {
    return login({ url: options.url ?? env.XMEMO_URL ?? bundledUrl(), scopes: options.scope, file: credentialsPath(env), say: out });
  }
  const client = new Client(await configuration(env));
  const run = { search, recall, resource, sync, push, lint, outcome }[command];
  const code = await run(client, args, options);
  if (env.XMEMO_BRIDGE_REQUESTS) fs.writeFileSync(env.XMEMO_BRIDGE_REQUESTS, String(client.requests));
  return code ?? EXIT.OK;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      if (error instanceof ExitError) {
        process.stderr.write(`${error.message}\n`);
        process.exitCode = error.exitCode;
      } else {
        process.stderr.write(`INTERNAL_ERROR: ${error.stack ?? error}\n`);
        process.exitCode = EXIT.SERVER;
      }
    },
  );
}

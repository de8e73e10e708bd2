// The bridge trusts nothing it receives (SPEC §17): a hostile HTTP server inside the test
// answers well-formed, correctly hashed listings and bundles whose slugs and paths point out of
// DIR, a tampered lock names folders out of DIR, and skill folders hold links to secrets. The
// real script runs as a child process; every refusal is exit 4 (sync) or 2 (push, lint) with
// nothing written, removed or uploaded.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { fakeServer, runScript, skill } from './support.mjs';

function hostileServer(skills) {
  return fakeServer((request) => {
    if (request.url.startsWith('/v1/sync')) return [200, { skills: skills.map((s) => s.entry) }];
    const bundle = /^\/v1\/revisions\/([^/]+)\/bundle$/.exec(request.url);
    const found = bundle && skills.find((s) => s.entry.revision_id === bundle[1]);
    if (found) return [200, found.bundle];
    if (request.url === '/v1/skills/lint') return [200, { errors: [], warnings: [], approx_tokens: { level0: 1, level1: 1, components: {} } }];
    return [201, { created: true, revision_id: 'rev_x', revision_number: 1, state: 'published', warnings: [] }];
  });
}

const run = (url, ...args) => runScript(args, { XMEMO_URL: url, XMEMO_TOKEN: 'xm_test' });

// Every file under root as {relative path: bytes}, links listed, not followed.
function tree(root) {
  const found = {};
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(root, full);
      if (entry.isSymbolicLink()) found[rel] = `-> ${fs.readlinkSync(full)}`;
      else if (entry.isDirectory()) walk(full);
      else found[rel] = fs.readFileSync(full, 'utf8');
    }
  };
  if (fs.existsSync(root)) walk(root);
  return found;
}

function sandbox() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xmemo-hostile-'));
  const dir = path.join(home, 'a', 'b', 'skills');
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(path.join(home, 'victim'));
  fs.writeFileSync(path.join(home, 'victim', 'keep.txt'), 'precious\n');
  fs.writeFileSync(path.join(home, '.bashrc'), 'mine\n');
  return { home, dir };
}

const UNSAFE_SLUGS = ['../../escaped', '/tmp/xmemo-absolute', '..\\..\\escaped', 'nul\u0000slug', 'esc\u001b[2J', '..', '.xmemo-lock.json'];
const UNSAFE_PATHS = ['../../../.bashrc', '/etc/xmemo-absolute', 'references\\..\\..\\x', 'references/a\u0000b', 'references/\u0007bell', 'references/../../x', 'references//x', './x'];

test('sync refuses every unsafe slug and file path from the server: exit 4, nothing written, the others sync', async () => {
  const cases = [...UNSAFE_SLUGS.map((slug) => skill(slug)), ...UNSAFE_PATHS.map((p) => skill('ok-paths', { [p]: 'pwned\n' }))];
  for (const hostile of cases) {
    const { home, dir } = sandbox();
    const before = tree(home);
    const server = await hostileServer([skill('good'), hostile]);
    try {
      const result = await run(server.url, 'sync', '--dir', dir);
      const label = JSON.stringify(hostile.entry.slug) + JSON.stringify(hostile.entry.files.map((f) => f.path));
      assert.equal(result.code, 4, `${label}: ${result.out}${result.err}`);
      assert.match(result.err + result.out, /unsafe|outside/, label);
      const after = tree(home);
      const added = Object.keys(after).filter((k) => !(k in before));
      assert.deepEqual(added.filter((k) => !k.startsWith(path.join('a', 'b', 'skills', 'good')) && !k.startsWith(path.join('a', 'b', 'skills', '.xmemo'))), [], label);
      for (const [k, v] of Object.entries(before)) assert.equal(after[k], v, `${label}: ${k} changed`);
      assert.ok(after[path.join('a', 'b', 'skills', 'good', 'SKILL.md')], `${label}: the safe skill still syncs`);
      assert.ok(!server.seen.includes(`GET /v1/revisions/${hostile.entry.revision_id}/bundle`), `${label}: not even downloaded`);
    } finally {
      server.close();
    }
  }
});

test('sync refuses a slug whose folder is a link out of DIR', async () => {
  const { home, dir } = sandbox();
  fs.symlinkSync(path.join(home, 'victim'), path.join(dir, 'linked'));
  const server = await hostileServer([skill('linked', { 'keep.txt': 'overwritten\n' })]);
  try {
    for (const flags of [[], ['--force'], ['--check']]) {
      const result = await run(server.url, 'sync', '--dir', dir, ...flags);
      assert.equal(result.code, 4, `${flags}: ${result.out}${result.err}`);
      assert.match(result.err + result.out, /linked: .*outside/);
      assert.equal(fs.readFileSync(path.join(home, 'victim', 'keep.txt'), 'utf8'), 'precious\n');
      assert.ok(fs.lstatSync(path.join(dir, 'linked')).isSymbolicLink());
    }
  } finally {
    server.close();
  }
});

test('a tampered lock never makes --prune remove anything outside DIR', async () => {
  const { home, dir } = sandbox();
  fs.symlinkSync(path.join(home, 'victim'), path.join(dir, 'linked'));
  const entry = { workspace: 'w', skill_id: 's', revision_id: 'r', canonical_hash: 'h', files: {} };
  const lock = { version: 1, server: 'x', skills: { '../../victim': entry, '../../../victim': entry, [path.join(home, 'victim')]: entry, linked: entry, '..': entry } };
  fs.writeFileSync(path.join(dir, '.xmemo-lock.json'), JSON.stringify(lock));
  const server = await hostileServer([skill('good')]);
  try {
    const result = await run(server.url, 'sync', '--dir', dir, '--prune', '--force');
    assert.equal(result.code, 4, result.out + result.err);
    assert.match(result.err + result.out, /unsafe|outside/);
    assert.equal(fs.readFileSync(path.join(home, 'victim', 'keep.txt'), 'utf8'), 'precious\n');
    assert.ok(fs.lstatSync(path.join(dir, 'linked')).isSymbolicLink());
    assert.ok(fs.existsSync(path.join(dir, 'good', 'SKILL.md')), 'the others sync');
  } finally {
    server.close();
  }
});

test('push and lint never follow a link out of the skill folder: exit 2 naming it, nothing sent', async () => {
  const { home } = sandbox();
  fs.writeFileSync(path.join(home, 'credentials'), 'AWS_SECRET=hunter2\n');
  const folder = path.join(home, 'repo', 'deploy');
  fs.mkdirSync(path.join(folder, 'references'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'SKILL.md'), '---\nname: deploy\ndescription: Deploy. Use when shipping.\n---\nbody\n');
  fs.writeFileSync(path.join(folder, 'references', 'inside.md'), 'inside\n');
  fs.symlinkSync(path.join(home, 'credentials'), path.join(folder, 'references', 'notes.txt'));
  const server = await hostileServer([]);
  try {
    for (const args of [['push', folder, '--workspace', 'w'], ['push', folder, '--workspace', 'w', '--dry-run'], ['lint', folder]]) {
      const result = await run(server.url, ...args);
      assert.equal(result.code, 2, `${args[0]}: ${result.out}${result.err}`);
      assert.match(result.err, /references\/notes\.txt/);
      assert.doesNotMatch(result.out + result.err, /hunter2/);
    }
    fs.unlinkSync(path.join(folder, 'references', 'notes.txt'));
    fs.symlinkSync(path.join(home, 'repo'), path.join(folder, 'references', 'up'));
    assert.equal((await run(server.url, 'lint', folder)).code, 2, 'a link to a folder out of it too');
    fs.unlinkSync(path.join(folder, 'references', 'up'));
    fs.renameSync(path.join(folder, 'SKILL.md'), path.join(home, 'SKILL.md'));
    fs.symlinkSync(path.join(home, 'SKILL.md'), path.join(folder, 'SKILL.md'));
    assert.equal((await run(server.url, 'lint', folder)).code, 2, 'SKILL.md itself a link out');
    assert.deepEqual(server.seen, []);
    // A link that stays inside the folder is read as the file it points at.
    fs.unlinkSync(path.join(folder, 'SKILL.md'));
    fs.renameSync(path.join(home, 'SKILL.md'), path.join(folder, 'SKILL.md'));
    fs.symlinkSync('inside.md', path.join(folder, 'references', 'alias.md'));
    const pushed = await run(server.url, 'push', folder, '--workspace', 'w');
    assert.equal(pushed.code, 0, pushed.err);
  } finally {
    server.close();
  }
});

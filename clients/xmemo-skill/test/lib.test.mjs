// Units of the bridge: canonical JSON and hash against vectors Python wrote (make_vectors.py),
// the frontmatter reader, argument parsing, and the lock comparisons.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import {
  EXIT,
  PyNumber,
  canonicalHash,
  canonicalJson,
  componentType,
  parseFrontmatter,
  pyFloatRepr,
  readJson,
  sameFiles,
  splitSkillMd,
} from '../scripts/lib.mjs';
import { folderFiles, parseCommand, readSkillFolder, verifyBundle } from '../scripts/xmemo-skill.mjs';
import { readCredentials, refreshedCredentials, requestedScopes, writeCredentials } from '../scripts/login.mjs';

const vectors = JSON.parse(fs.readFileSync(new URL('./vectors.json', import.meta.url), 'utf8'));

test('canonical JSON is byte for byte what Python json.dumps(sort_keys, compact, non-ASCII kept) writes', () => {
  for (const { wire, canonical } of vectors.values) {
    assert.equal(canonicalJson(readJson(wire)), canonical, wire);
  }
});

test('the canonical hash matches Python for whole documents', () => {
  for (const { wire, canonical_hash: expected } of vectors.documents) {
    const doc = readJson(wire);
    const hash = canonicalHash({
      name: doc.name,
      description: doc.description,
      frontmatter: doc.frontmatter,
      instructionBody: doc.instruction_body,
      components: doc.components.map(([p, type, sha256]) => ({ path: p, type, sha256 })),
    });
    assert.equal(hash, expected);
  }
});

test('floats are laid out as Python repr does', () => {
  const cases = [[1, '1.0'], [1e16, '1e+16'], [1e15, '1000000000000000.0'], [0.0001, '0.0001'], [1e-5, '1e-05'], [-2.5e-10, '-2.5e-10'], [123.456, '123.456']];
  for (const [x, text] of cases) assert.equal(pyFloatRepr(x), text);
  assert.equal(canonicalJson(new PyNumber('1.0')), '1.0');
  assert.equal(canonicalJson(new PyNumber('10')), '10');
});

test('the frontmatter reader reads what the server writes and what people write', () => {
  const { yaml, body } = splitSkillMd("---\nname: deploy\ndescription: 'It''s: quoted'\nx-xmemo-display-name: Deploy runbook\n---\n---\nbody starts with ---\n");
  assert.equal(body, '---\nbody starts with ---\n');
  assert.deepEqual(parseFrontmatter(yaml), { name: 'deploy', description: "It's: quoted", 'x-xmemo-display-name': 'Deploy runbook' });
  const parsed = parseFrontmatter([
    'license: MIT',
    'metadata:',
    '  version: 2',
    '  tags:',
    '  - a',
    '  - "b c"',
    'allowed-tools: [Read, Grep]',
    'enabled: true',
    'empty:',
    'day: 2024-01-01',
    'text: |',
    '  line one',
    '  line two',
    'folded: >-',
    '  one',
    '  two',
    'list:',
    '- k: v',
    '  j: 1',
  ].join('\n'));
  assert.deepEqual(JSON.parse(JSON.stringify(parsed)), {
    license: 'MIT',
    metadata: { version: 2, tags: ['a', 'b c'] },
    'allowed-tools': ['Read', 'Grep'],
    enabled: true,
    empty: null,
    day: '2024-01-01',
    text: 'line one\nline two\n',
    folded: 'one two',
    list: [{ k: 'v', j: 1 }],
  });
  assert.throws(() => parseFrontmatter('a: 1\na: 2'), (e) => e.exitCode === EXIT.USAGE);
  assert.throws(() => parseFrontmatter('a: &anchor x'), (e) => e.exitCode === EXIT.USAGE);
});

test('arguments: exact commands, usage errors exit 2, never a token on the command line', () => {
  assert.deepEqual({ ...parseCommand(['sync', '--dir', 'd', '--workspace', 'a', '--workspace', 'b', '--prune']).options }, {
    dir: 'd',
    workspace: ['a', 'b'],
    prune: true,
  });
  assert.deepEqual(parseCommand(['push', 'x', 'y', '--workspace', 'w', '--dry-run']).args, ['x', 'y']);
  assert.equal(parseCommand(['recall', 's', '--label', 'staging']).options.label, 'staging');
  assert.equal(parseCommand(['sync', '--dir', 'd', '--label', 'staging']).options.label, 'staging');
  for (const argv of [[], ['nope'], ['search'], ['resource', 's', 'p'], ['sync'], ['push', 'x'], ['recall', 's', '--bogus'], ['search', 'q', '--token', 'x'], ['search', 'q', '--limit', 'ten'], ['recall', 's', '--label', 'l', '--revision', 'r'], ['search', 'q', '--label', 'l']]) {
    assert.throws(() => parseCommand(argv), (e) => e.exitCode === EXIT.USAGE, argv.join(' '));
  }
});

test('login asks for read and write unless --scope names what to ask for', () => {
  assert.deepEqual(requestedScopes(parseCommand(['login']).options.scope), ['skills:read', 'skills:write']);
  const { scope } = parseCommand(['login', '--scope', 'skills:read,skills:execute', '--scope', 'skills:read']).options;
  assert.deepEqual(requestedScopes(scope), ['skills:read', 'skills:execute']);
  assert.deepEqual(requestedScopes(['skills:read skills:review']), ['skills:read', 'skills:review']);
});

test('lock logic: files compare as sets of path and sha256', () => {
  assert.ok(sameFiles({ a: '1', b: '2' }, { b: '2', a: '1' }));
  assert.ok(!sameFiles({ a: '1' }, { a: '1', b: '2' }));
  assert.ok(!sameFiles({ a: '1' }, { a: '2' }));
  assert.ok(!sameFiles(null, { a: '1' }));
});

test('a bundle whose bytes disagree with its hashes is refused with exit 4', () => {
  const skillMd = '---\nname: x\ndescription: y\n---\nbody\n';
  const sha = (text) => createHashHex(text);
  const component = { path: 'references/a.md', type: 'reference', encoding: 'utf-8', content: '# A\n', sha256: sha('# A\n') };
  const bundle = {
    revision_id: 'rev_1',
    name: 'x',
    description: 'y',
    frontmatter: {},
    instruction_body: 'body\n',
    files: [{ path: 'SKILL.md', type: null, encoding: 'utf-8', content: skillMd, sha256: sha(skillMd) }, component],
  };
  bundle.canonical_hash = canonicalHash({ name: 'x', description: 'y', frontmatter: {}, instructionBody: 'body\n', components: [component] });
  const entry = { slug: 'x', revision_id: 'rev_1', canonical_hash: bundle.canonical_hash, files: bundle.files.map((f) => ({ path: f.path, sha256: f.sha256 })) };
  assert.equal(verifyBundle(bundle, entry).length, 2);
  const tampered = structuredClone(bundle);
  tampered.files[1].content = '# B\n';
  assert.throws(() => verifyBundle(tampered, entry), (e) => e.exitCode === EXIT.INTEGRITY);
  const body = structuredClone(bundle);
  body.instruction_body = 'bodY\n';
  assert.throws(() => verifyBundle(body, entry), (e) => e.exitCode === EXIT.INTEGRITY);
});

test('a skill folder is read as a save body; types follow the folders as the server types them', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xmemo-'));
  const folder = path.join(dir, 'deploy');
  fs.mkdirSync(path.join(folder, 'scripts'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'SKILL.md'), '---\nname: deploy\ndescription: d\nx-xmemo-display-name: Deploy runbook\nlicense: MIT\n---\n# Body\n');
  fs.writeFileSync(path.join(folder, 'scripts', 'go.sh'), 'echo go\n');
  fs.writeFileSync(path.join(folder, 'logo.bin'), Buffer.from([0, 255]));
  fs.writeFileSync(path.join(folder, '.DS_Store'), 'junk');
  const { body, namesFolder } = readSkillFolder(folder);
  assert.ok(namesFolder);
  assert.deepEqual(body, {
    slug: 'deploy',
    name: 'Deploy runbook',
    description: 'd',
    instruction_body: '# Body\n',
    frontmatter: { license: 'MIT' },
    components: [
      { logical_path: 'logo.bin', type: 'artifact', content: 'AP8=', encoding: 'base64' },
      { logical_path: 'scripts/go.sh', type: 'script', content: 'echo go\n', encoding: 'utf-8' },
    ],
  });
  assert.deepEqual(Object.keys(folderFiles(folder)).sort(), ['SKILL.md', 'logo.bin', 'scripts/go.sh']);
  // What sync writes now: the display name inside `metadata`, which it leaves (empty: gone).
  for (const [metadata, rest] of [['metadata:\n  xmemo-display-name: Deploy runbook\n', {}], ['metadata:\n  team: sre\n  xmemo-display-name: Deploy runbook\n', { metadata: { team: 'sre' } }]]) {
    fs.writeFileSync(path.join(folder, 'SKILL.md'), `---\nname: deploy\ndescription: d\n${metadata}---\n# Body\n`);
    const read = readSkillFolder(folder).body;
    assert.deepEqual([read.name, read.frontmatter], ['Deploy runbook', rest]);
  }
  assert.equal(componentType('notes.md', Buffer.from('x')), 'document');
});

test('credentials are written 0600, refused when others can read them, and kept when fresh', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xmemo-cred-'));
  const file = path.join(dir, 'xmemo', 'credentials.json');
  const credentials = { url: 'http://127.0.0.1:1', access_token: 'a', refresh_token: 'r', expires_at: Math.floor(Date.now() / 1000) + 3600, token_endpoint: 'http://127.0.0.1:1/oauth/token/', client_id: 'c' };
  writeCredentials(file, credentials);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readCredentials(file), credentials);
  assert.deepEqual(await refreshedCredentials(file), credentials); // not due: no request made
  fs.chmodSync(file, 0o644);
  assert.throws(() => readCredentials(file), (e) => e.exitCode === EXIT.USAGE);
});


function createHashHex(text) {
  return createHash('sha256').update(text).digest('hex');
}

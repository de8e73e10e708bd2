// The scan in the bridge (SPEC §21): sync leaves out a skill whose revision's scan says `block`
// (overridden or not) unless --allow-flagged, lint prints the scan's findings, and push passes
// --acknowledge-secrets on, naming the secret's path and line when refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { fakeServer, runScript, skill } from './support.mjs';

const run = (url, ...args) => runScript(args, { XMEMO_URL: url, XMEMO_TOKEN: 'xm_test' });
const FINDING = { rule_id: 'pipe-to-shell', severity: 'high', category: 'dangerous_command', path: 'scripts/install.sh', line: 3, excerpt: 'curl x | sh', message: 'Downloads and runs a script' };
const scanOf = (verdict) => ({ verdict, findings: verdict === 'clean' ? [] : [FINDING], scanner_version: 'v' });

function scannedServer(skills) {
  return fakeServer((request) => {
    if (request.url.startsWith('/v1/sync')) return [200, { skills: skills.map((s) => s.entry) }];
    const bundle = /^\/v1\/revisions\/([^/]+)\/bundle$/.exec(request.url);
    const found = bundle && skills.find((s) => s.entry.revision_id === bundle[1]);
    return found ? [200, { ...found.bundle, scan: found.scan }] : [404, { error: { code: 'NOT_FOUND', message: 'no' } }];
  });
}

const scanned = (slug, scan) => ({ ...skill(slug), scan });

test('sync leaves out a block skill and says so (exit 0); --allow-flagged writes it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xmemo-scan-'));
  const server = await scannedServer([scanned('good', scanOf('clean')), scanned('evil', scanOf('block')), scanned('meh', scanOf('warn'))]);
  try {
    const first = await run(server.url, 'sync', '--dir', dir);
    assert.equal(first.code, 0, first.out + first.err);
    assert.match(first.out, /evil: its scan says block .*skipped.*--allow-flagged/);
    assert.match(first.out, /evil: scripts\/install\.sh:3: high dangerous_command: Downloads and runs a script/);
    for (const slug of ['good', 'meh']) assert.ok(fs.existsSync(path.join(dir, slug, 'SKILL.md')), slug);
    assert.ok(!fs.existsSync(path.join(dir, 'evil')), 'the block skill is not written');
    assert.ok(!('evil' in JSON.parse(fs.readFileSync(path.join(dir, '.xmemo-lock.json'), 'utf8')).skills));
    const again = await run(server.url, 'sync', '--dir', dir);
    assert.equal(again.code, 0);
    assert.match(again.out, /evil: its scan says block/, 'said again on the next sync');
    const check = await run(server.url, 'sync', '--dir', dir, '--check');
    assert.equal(check.code, 0, `a left-out block skill is no difference: ${check.out}`);
    assert.match(check.out, /evil: its scan says block/);
    assert.equal((await run(server.url, 'sync', '--dir', dir, '--check', '--allow-flagged')).code, 1);
    const allowed = await run(server.url, 'sync', '--dir', dir, '--allow-flagged');
    assert.equal(allowed.code, 0, allowed.out + allowed.err);
    assert.match(allowed.out, /evil: added/);
    assert.ok(fs.existsSync(path.join(dir, 'evil', 'SKILL.md')));
  } finally {
    server.close();
  }
});

function skillFolder() {
  const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'xmemo-scan-')), 'deploy');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'SKILL.md'), '---\nname: deploy\ndescription: Deploy. Use when shipping.\n---\nbody\n');
  return folder;
}

test('lint prints each scan finding as path:line, severity, category, message', async () => {
  const server = await fakeServer(() => [200, { errors: [], warnings: [], approx_tokens: { level0: 1, level1: 1, components: {} }, scan: { verdict: 'block', findings: [FINDING] } }]);
  try {
    const folder = skillFolder();
    const result = await run(server.url, 'lint', folder);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /scan: block/);
    assert.match(result.out, /scripts\/install\.sh:3: high dangerous_command: Downloads and runs a script/);
  } finally {
    server.close();
  }
});

test('push --acknowledge-secrets sends acknowledge_secrets; a refusal names path and line, exit 5', async () => {
  const refusing = await fakeServer(() => [400, { error: { code: 'SECRET_DETECTED', message: 'The content holds a secret.', details: { path: 'references/key.pem', line: 1 } } }]);
  const accepting = await fakeServer(() => [201, { created: true, revision_id: 'rev_x', revision_number: 1, state: 'published', warnings: [] }]);
  try {
    const folder = skillFolder();
    const refused = await run(refusing.url, 'push', folder, '--workspace', 'w');
    assert.equal(refused.code, 5);
    assert.match(refused.err, /SECRET_DETECTED: .*references\/key\.pem:1.*--acknowledge-secrets/);
    assert.equal((await run(accepting.url, 'push', folder, '--workspace', 'w')).code, 0);
    const pushed = await run(accepting.url, 'push', folder, '--workspace', 'w', '--acknowledge-secrets');
    assert.equal(pushed.code, 0, pushed.err);
    assert.equal(accepting.bodies[0].acknowledge_secrets, undefined);
    assert.equal(accepting.bodies[1].acknowledge_secrets, true);
  } finally {
    refusing.close();
    accepting.close();
  }
});

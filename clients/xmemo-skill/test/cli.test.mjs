// The command line as a person meets it (issue 37 item 16): help exits 0, --json prints the
// REST answer and exits 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fakeServer, runScript } from './support.mjs';

test('--help, -h and help print the usage and exit 0, for every command too', async () => {
  for (const args of [['--help'], ['-h'], ['help'], ['login', '--help'], ['sync', '--help'], ['push', '-h']]) {
    const result = await runScript(args);
    assert.equal(result.code, 0, `${args}: ${result.err}`);
    assert.match(result.out, /^usage: xmemo-skill/, args.join(' '));
    assert.equal(result.err, '', args.join(' '));
  }
  const bare = await runScript([]);
  assert.equal(bare.code, 2, 'no command at all is still a usage error');
  assert.match(bare.err, /^usage: xmemo-skill/);
});

test('search --json and recall --json print the answer verbatim and exit 0', async () => {
  const answers = {
    query: { kind: 'search', data: { results: [{ slug: 'deploy', workspace: 'me', name: 'Deploy', description: 'd' }] } },
    slug: { kind: 'root', data: { slug: 'deploy', revision_id: 'rev_1', resources: [] } },
  };
  const server = await fakeServer((request) => {
    const query = new URL(request.url, 'http://x').searchParams;
    return [200, query.has('query') ? answers.query : answers.slug];
  });
  try {
    const env = { XMEMO_URL: server.url, XMEMO_TOKEN: 'xm_test' };
    for (const [args, expected] of [[['search', 'deploy', '--json'], answers.query], [['recall', 'deploy', '--json'], answers.slug]]) {
      const result = await runScript(args, env);
      assert.equal(result.code, 0, `${args[0]}: ${result.err}`);
      assert.equal(result.err, '');
      assert.deepEqual(JSON.parse(result.out), expected);
    }
  } finally {
    server.close();
  }
});

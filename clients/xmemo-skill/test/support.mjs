// Shared by the bridge's tests: the real script as a child process, and a fake server.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

import { canonicalHash, sha256Hex } from '../scripts/lib.mjs';

const SCRIPT = fileURLToPath(new URL('../scripts/xmemo-skill.mjs', import.meta.url));

// A server answering `answer(request)` → [status, JSON value]; `seen` lists "METHOD /path",
// `bodies` each request's JSON body (null without one).
export async function fakeServer(answer) {
  const seen = [];
  const bodies = [];
  const server = http.createServer(async (request, response) => {
    seen.push(`${request.method} ${request.url.split('?')[0]}`);
    let text = '';
    for await (const chunk of request) text += chunk;
    bodies.push(text ? JSON.parse(text) : null);
    const [status, value] = answer(request);
    response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, bodies, close: () => server.close() };
}

// The script with only PATH and `env`; resolves {code, out, err}.
export function runScript(args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, out: stdout, err: stderr });
    });
  });
}

// One skill as the server would serve it, hashes and all, whatever its slug and paths say.
export function skill(slug, components = {}, body = `# ${slug}\n`) {
  const skillMd = `---\nname: ${JSON.stringify(slug)}\ndescription: d\n---\n${body}`;
  const files = [{ path: 'SKILL.md', type: null, encoding: 'utf-8', content: skillMd, sha256: sha256Hex(skillMd) }];
  for (const [p, content] of Object.entries(components)) files.push({ path: p, type: 'document', encoding: 'utf-8', content, sha256: sha256Hex(content) });
  const revisionId = `rev_${sha256Hex(slug + JSON.stringify(components)).slice(0, 12)}`;
  const hash = canonicalHash({ name: slug, description: 'd', frontmatter: {}, instructionBody: body, components: files.slice(1) });
  return {
    entry: { slug, workspace: 'mallory', skill_id: `skill_${revisionId}`, revision_id: revisionId, revision_number: 1, canonical_hash: hash, files: files.map((f) => ({ path: f.path, sha256: f.sha256, size: Buffer.byteLength(f.content) })) },
    bundle: { revision_id: revisionId, canonical_hash: hash, name: slug, description: 'd', frontmatter: {}, instruction_body: body, files },
  };
}

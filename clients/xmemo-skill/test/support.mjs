// Shared by the bridge's tests: the real script as a child process, and a fake server.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/xmemo-skill.mjs', import.meta.url));

// A server answering `answer(request)` → [status, JSON value]; `seen` lists "METHOD /path".
export async function fakeServer(answer) {
  const seen = [];
  const server = http.createServer((request, response) => {
    seen.push(`${request.method} ${request.url.split('?')[0]}`);
    const [status, value] = answer(request);
    response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close: () => server.close() };
}

// The script with only PATH and `env`; resolves {code, out, err}.
export function runScript(args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, out: stdout, err: stderr });
    });
  });
}

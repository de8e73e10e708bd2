// The pure parts of the bridge (no network, no process state): canonical JSON as Python's
// json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) writes it, a JSON reader
// that keeps number lexemes, the canonical hash of SPEC §3, a SKILL.md frontmatter reader (the
// YAML that skills use), and the lock file's comparisons. Unit-tested by `node --test`.

import { createHash } from 'node:crypto';

export const SKILL_MD = 'SKILL.md';
// A display name that differs from the slug: in the Agent Skills `metadata` map (the server's
// skills_app/domain/skillmd.py); the top-level key older servers wrote is still read.
export const DISPLAY_NAME_KEY = 'xmemo-display-name';
export const LEGACY_DISPLAY_NAME_KEY = 'x-xmemo-display-name';
export const LOCK_FILE = '.xmemo-lock.json';
export const CACHE_FILE = '.xmemo-cache.json';

export const EXIT = Object.freeze({ OK: 0, FAILED: 1, USAGE: 2, LOCAL_EDITS: 3, INTEGRITY: 4, SERVER: 5 });

export class ExitError extends Error {
  constructor(code, message) {
    super(message);
    this.exitCode = code;
  }
}

export function sha256Hex(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

// --- numbers as Python writes them ------------------------------------------------------------

// A JSON number read by readJson: its lexeme decides int (no '.', 'e') or float, as json.loads.
export class PyNumber {
  constructor(lexeme, isFloat = /[.eE]/.test(lexeme)) {
    this.lexeme = lexeme;
    this.isFloat = isFloat;
  }
  get isInt() {
    return !this.isFloat;
  }
  valueOf() {
    return Number(this.lexeme);
  }
  toString() {
    return this.lexeme;
  }
  toJSON() {
    return Number(this.lexeme);
  }
}

// repr(float): the shortest round-trip digits (as JS finds them), laid out by Python's rule:
// positional when -4 <= exponent < 16 (always with a fractional part), else d.ddde±XX.
export function pyFloatRepr(x) {
  if (!Number.isFinite(x)) throw new ExitError(EXIT.INTEGRITY, `${x} is not a JSON number`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exp = Number(expText);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const whole = digits.length > exp + 1 ? digits.slice(0, exp + 1) : digits.padEnd(exp + 1, '0');
    const frac = digits.length > exp + 1 ? digits.slice(exp + 1) : '0';
    return `${sign}${whole}.${frac}`;
  }
  const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp).toString().padStart(2, '0');
  return `${sign}${body}e${exp < 0 ? '-' : '+'}${e}`;
}

function numberText(value) {
  if (value instanceof PyNumber) {
    return value.isInt ? BigInt(value.lexeme).toString() : pyFloatRepr(Number(value.lexeme));
  }
  if (typeof value === 'bigint') return value.toString();
  return Number.isInteger(value) ? String(value) : pyFloatRepr(value);
}

// --- canonical JSON -----------------------------------------------------------------------------

const ESCAPES = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

export function pyString(text) {
  // ensure_ascii=False: only '"', '\\' and the C0 controls are escaped (DEL, U+2028 kept).
  return `"${text.replace(/["\\\u0000-\u001f]/g, (ch) => ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

// Python sorts str keys by code point; JS's default sort compares UTF-16 units.
export function compareCodePoints(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

// sortKeys false keeps the authored key order (request bodies: frontmatter order is stored).
export function canonicalJson(value, sortKeys = true) {
  const again = (v) => canonicalJson(v, sortKeys);
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'number' || typeof value === 'bigint' || value instanceof PyNumber) {
    return numberText(value);
  }
  if (Array.isArray(value)) return `[${value.map(again).join(',')}]`;
  if (typeof value === 'object') {
    const keys = sortKeys ? Object.keys(value).sort(compareCodePoints) : Object.keys(value);
    return `{${keys.map((k) => `${pyString(k)}:${again(value[k])}`).join(',')}}`;
  }
  throw new ExitError(EXIT.INTEGRITY, `cannot hash a ${typeof value}`);
}

// --- a JSON reader that keeps number lexemes (JSON.parse turns 1.0 into 1) -------------------

export function readJson(text) {
  let i = 0;
  const fail = (what) => {
    throw new ExitError(EXIT.SERVER, `the server's JSON is malformed (${what} at ${i})`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i += 1;
  };
  const value = () => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i += 1;
      const out = {};
      ws();
      if (text[i] === '}') {
        i += 1;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a key');
        const key = string();
        ws();
        if (text[i] !== ':') fail("':'");
        i += 1;
        Object.defineProperty(out, key, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') i += 1;
        else if (text[i] === '}') {
          i += 1;
          return out;
        } else fail("',' or '}'");
      }
    }
    if (ch === '[') {
      i += 1;
      const out = [];
      ws();
      if (text[i] === ']') {
        i += 1;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') i += 1;
        else if (text[i] === ']') {
          i += 1;
          return out;
        } else fail("',' or ']'");
      }
    }
    if (ch === '"') return string();
    for (const [word, result] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return result;
      }
    }
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) fail('a value');
    i += match[0].length;
    return new PyNumber(match[0]);
  };
  const string = () => {
    const start = i;
    i += 1;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('an unterminated string');
    i += 1;
    return JSON.parse(text.slice(start, i));
  };
  const result = value();
  ws();
  if (i !== text.length) fail('trailing text');
  return result;
}

// --- the canonical hash (SPEC §3) --------------------------------------------------------------

export function canonicalHash({ name, description, frontmatter, instructionBody, components }) {
  const sorted = [...components].sort((a, b) => compareCodePoints(a.path, b.path));
  const document = {
    v: 1,
    name,
    description,
    frontmatter,
    instruction_body: instructionBody,
    components: sorted.map((c) => ({ path: c.path, type: c.type, sha256: c.sha256 })),
  };
  return sha256Hex(Buffer.from(canonicalJson(document), 'utf8'));
}

// --- component typing, as the server's folder reader does (skills_app/formats/files.py) -------

const TYPE_BY_FOLDER = {
  scripts: 'script',
  reference: 'reference',
  references: 'reference',
  examples: 'example',
  templates: 'template',
  assets: 'artifact',
};
export const JUNK_FILES = new Set(['.DS_Store', 'Thumbs.db']);
export const JUNK_FOLDERS = new Set(['__MACOSX', '.git']);

export function isText(bytes) {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export function componentType(path, bytes) {
  const folder = path.includes('/') ? path.split('/', 1)[0] : '';
  return TYPE_BY_FOLDER[folder] ?? (isText(bytes) ? 'document' : 'artifact');
}

// --- SKILL.md frontmatter: the YAML skills are written in ---------------------------------------

export function splitSkillMd(text) {
  const open = /^---[ \t]*\r?\n/.exec(text);
  if (!open) return { yaml: '', body: text };
  const rest = text.slice(open[0].length);
  const close = /^---[ \t]*\r?(\n|$)/m.exec(rest);
  if (!close) throw new ExitError(EXIT.USAGE, 'SKILL.md: the frontmatter has no closing --- line');
  return { yaml: rest.slice(0, close.index), body: rest.slice(close.index + close[0].length) };
}

const unsupported = (line, what) =>
  new ExitError(EXIT.USAGE, `SKILL.md frontmatter line ${line}: ${what} is not supported by this client's YAML reader`);

function scalar(raw, line) {
  const text = raw.trim();
  if (text === '' || text === '~' || /^(null|Null|NULL)$/.test(text)) return null;
  if (/^(true|True|TRUE|yes|Yes|YES|on|On|ON)$/.test(text)) return true;
  if (/^(false|False|FALSE|no|No|NO|off|Off|OFF)$/.test(text)) return false;
  if (/^[-+]?(0|[1-9][0-9_]*)$/.test(text)) return Number(text.replace(/_/g, ''));
  if (/^[-+]?(\d[\d_]*)?\.\d*([eE][-+]?\d+)?$/.test(text) && /\d/.test(text)) {
    return new PyNumber(String(Number(text.replace(/_/g, ''))), true); // YAML 1.1 floats
  }
  if (text.startsWith("'")) {
    if (!text.endsWith("'") || text.length < 2) throw unsupported(line, 'a multi-line quoted string');
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw unsupported(line, 'a multi-line quoted string');
    return JSON.parse(text.replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1').replace(/\\([LPN_ ])/g, (_, c) => ({ L: '\\u2028', P: '\\u2029', N: '\\u0085', _: '\\u00a0', ' ': ' ' })[c]));
  }
  if (text.startsWith('[') || text.startsWith('{')) return flow(text, line);
  if (/^[&*!|>%@`]/.test(text)) throw unsupported(line, `a value starting with '${text[0]}'`);
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) return text; // the server keeps dates as text
  return text.replace(/\s+#.*$/, '');
}

function flow(text, line) {
  // Flow collections of plain or quoted scalars: [a, 'b', 1], {a: 1, b: [x]}.
  let i = 0;
  const item = () => {
    while (text[i] === ' ') i += 1;
    if (text[i] === '[') {
      i += 1;
      const out = [];
      while (text[i] !== ']') {
        out.push(item());
        while (text[i] === ' ') i += 1;
        if (text[i] === ',') i += 1;
        else if (text[i] !== ']') throw unsupported(line, 'this flow sequence');
        while (text[i] === ' ') i += 1;
      }
      i += 1;
      return out;
    }
    if (text[i] === '{') {
      i += 1;
      const out = {};
      while (text[i] !== '}') {
        while (text[i] === ' ') i += 1;
        const colon = text.indexOf(':', i);
        if (colon < 0) throw unsupported(line, 'this flow mapping');
        const key = scalar(text.slice(i, colon), line);
        i = colon + 1;
        out[String(key)] = item();
        while (text[i] === ' ') i += 1;
        if (text[i] === ',') i += 1;
        else if (text[i] !== '}') throw unsupported(line, 'this flow mapping');
        while (text[i] === ' ') i += 1;
      }
      i += 1;
      return out;
    }
    let end = i;
    if (text[i] === '"' || text[i] === "'") {
      const q = text[i];
      end = i + 1;
      while (end < text.length && !(text[end] === q && text[end + 1] !== q)) end += text[end] === q || text[end] === '\\' ? 2 : 1;
      end += 1;
    } else {
      while (end < text.length && !',]}'.includes(text[end])) end += 1;
    }
    const value = scalar(text.slice(i, end), line);
    i = end;
    return value;
  };
  const value = item();
  if (text.slice(i).trim()) throw unsupported(line, 'text after a flow collection');
  return value;
}

export function parseFrontmatter(yaml) {
  const lines = yaml.split(/\r?\n/);
  let n = 0;
  const indentOf = (l) => l.length - l.trimStart().length;
  const skipBlank = () => {
    while (n < lines.length && (lines[n].trim() === '' || lines[n].trimStart().startsWith('#'))) n += 1;
  };
  const blockScalar = (header, parentIndent) => {
    const m = /^([|>])([+-]?)(\d?)([+-]?)\s*$/.exec(header);
    if (!m) throw unsupported(n, `the block scalar header '${header}'`);
    const chomp = m[2] || m[4];
    const body = [];
    let indent = m[3] ? parentIndent + Number(m[3]) : null;
    while (n < lines.length) {
      const l = lines[n];
      if (l.trim() === '') {
        body.push('');
        n += 1;
        continue;
      }
      if (indent === null) indent = indentOf(l);
      if (indentOf(l) < indent || indentOf(l) <= parentIndent) break;
      body.push(l.slice(indent));
      n += 1;
    }
    let trailing = 0;
    while (body.length && body[body.length - 1] === '') {
      body.pop();
      trailing += 1;
    }
    let text = m[1] === '|' ? body.join('\n') : body.reduce((acc, l, k) => (k === 0 ? l : acc + (l === '' || body[k - 1] === '' || /^\s/.test(l) ? '\n' : ' ') + l), '').replace(/\n\n/g, '\n');
    if (body.length === 0) return '';
    if (chomp === '+') text += '\n'.repeat(trailing + 1);
    else if (chomp !== '-') text += '\n';
    return text;
  };
  const node = (indent) => {
    skipBlank();
    if (n >= lines.length) return null;
    const first = lines[n].slice(indent);
    if (first.startsWith('- ') || first === '-') return sequence(indent);
    return mapping(indent);
  };
  const valueAfter = (rest, indent) => {
    const text = rest.trim();
    if (text === '') {
      skipBlank();
      if (n < lines.length && indentOf(lines[n]) > indent) return node(indentOf(lines[n]));
      if (n < lines.length && indentOf(lines[n]) === indent && lines[n].trimStart().startsWith('- ')) return sequence(indent);
      return null;
    }
    if (/^[|>]/.test(text)) return blockScalar(text, indent);
    return scalar(text, n);
  };
  const sequence = (indent) => {
    const out = [];
    for (;;) {
      skipBlank();
      if (n >= lines.length || indentOf(lines[n]) !== indent || !/^-( |$)/.test(lines[n].slice(indent))) return out;
      const rest = lines[n].slice(indent + 1);
      const inner = rest.trimStart();
      n += 1;
      if (/^[^'"[{][^:]*:( |$)/.test(inner) || /^['"][^'"]*['"]:( |$)/.test(inner)) {
        // "- key: value" starts a mapping indented at the item's content
        n -= 1;
        const itemIndent = indent + 1 + (rest.length - inner.length);
        lines[n] = ' '.repeat(itemIndent) + inner;
        out.push(mapping(itemIndent));
      } else {
        out.push(valueAfter(rest, indent));
      }
    }
  };
  const mapping = (indent) => {
    const out = {};
    for (;;) {
      skipBlank();
      if (n >= lines.length || indentOf(lines[n]) !== indent) return out;
      const l = lines[n].slice(indent);
      const m = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^'"#\s][^:#]*?)\s*:(?:\s+(.*))?$/.exec(l);
      if (!m) throw unsupported(n + 1, `'${l.slice(0, 40)}'`);
      const key = String(scalar(m[1], n + 1));
      if (Object.hasOwn(out, key)) throw new ExitError(EXIT.USAGE, `SKILL.md frontmatter: the key '${key}' appears twice`);
      n += 1;
      out[key] = valueAfter(m[2] ?? '', indent);
    }
  };
  const result = node(0);
  skipBlank();
  if (n < lines.length) throw unsupported(n + 1, 'indentation');
  if (result !== null && (typeof result !== 'object' || Array.isArray(result))) {
    throw new ExitError(EXIT.USAGE, 'SKILL.md: the frontmatter must be a mapping');
  }
  return result ?? {};
}

// --- what the server and the lock name: plain relative paths only (SPEC §17) -------------------

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
// C0 and C1 controls (NUL, escape sequences, bells) and DEL.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// Why a slug or a file path read from the server or the lock is unsafe to join to DIR, or null.
export function unsafeName(text, { slug = false } = {}) {
  if (typeof text !== 'string' || text === '') return 'is empty';
  if (CONTROL.test(text)) return 'holds a NUL or a control character';
  if (text.includes('\\')) return 'holds a backslash';
  if (text.startsWith('/') || /^[A-Za-z]:/.test(text)) return 'is absolute';
  const parts = text.split('/');
  if (parts.includes('..')) return "holds '..'";
  if (parts.some((part) => part === '' || part === '.')) return "holds an empty or '.' segment";
  if (slug && !SLUG.test(text)) return 'is not a slug (a-z, 0-9 and single dashes)';
  return null;
}

// A SKILL.md's frontmatter as a save's fields: the display name (else `name`), the
// description, and the rest without the display name (a `metadata` it leaves empty goes too).
export function splitIdentity(frontmatter) {
  const { name, description, [LEGACY_DISPLAY_NAME_KEY]: legacy, ...rest } = frontmatter;
  let display = legacy;
  const metadata = rest.metadata;
  if (metadata && typeof metadata === 'object' && !Array.isArray(metadata) && Object.hasOwn(metadata, DISPLAY_NAME_KEY)) {
    const { [DISPLAY_NAME_KEY]: carried, ...others } = metadata;
    display ??= carried;
    if (Object.keys(others).length) rest.metadata = others;
    else delete rest.metadata;
  }
  return { name: display ?? name, description, rest };
}

// --- lock comparisons -------------------------------------------------------------------------

export function sameFiles(a, b) {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

export function filesOfListing(entry) {
  return Object.fromEntries(entry.files.map((f) => [f.path, f.sha256]));
}

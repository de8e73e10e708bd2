"""The product's own rules: what contract §21 names and detect-secrets does not look for.

Each rule is a pattern with a severity for prose (``SKILL.md``, Markdown, text) and one for
code (scripts and sources): a ``curl … | sh`` an author documents is worth a look, the same
line in a script an agent may run is a block. What each rule is for, and the measured false
alarms on public skills, is in docs/scanning.md.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from skills_app.domain.scan.findings import Finding, Text, visible

_I = re.IGNORECASE


@dataclass(frozen=True)
class Rule:
    rule_id: str
    category: str
    pattern: re.Pattern[str]
    prose: str | None  # severity in SKILL.md and prose; None: not looked for there
    code: str | None  # severity in scripts and sources
    message: str


_NETWORK_TOOL = r"(?:curl|wget|nc|ncat|netcat|Invoke-WebRequest|iwr|Invoke-RestMethod)"
_SHELL = r"(?:sudo\s+)?(?:ba|z|da|k|fi)?sh|python3?|perl|ruby|node|iex|Invoke-Expression"

# Phrases that try to take over the agent reading the skill.
_INJECTION = [
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
    r"(?:previous|prior|above|earlier|preceding|system|original|safety)\s+"
    r"(?:instructions?|prompts?|rules|directions|guidelines|messages)",
    r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to"
    r"|alert|notify)\s+(?:this\s+to\s+)?the\s+user\b",
    r"\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b",
    r"\b(?:hide|conceal)\s+(?:this|these|the)\s+(?:\w+\s+){0,2}from\s+the\s+user\b",
    r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN\b|developer\s+mode|jailbroken|an?\s+unrestricted)",
    r"(?:<\|im_start\|>|<\|system\|>|\[INST\]|<<SYS>>)",
    r"\b(?:new|updated|real)\s+system\s+prompt\s*:",
    r"\b(?:reveal|print|output|repeat|leak)\s+(?:your\s+|the\s+)?(?:full\s+)?"
    r"(?:system\s+prompt|hidden\s+instructions)",
]
_INJECTION_RX = re.compile("|".join(f"(?:{p})" for p in _INJECTION), _I)

RULES: tuple[Rule, ...] = (
    Rule(
        "prompt_injection.override",
        "prompt_injection",
        _INJECTION_RX,
        "high",
        "high",
        "Text that tries to override the agent's instructions or hide actions from the user.",
    ),
    Rule(
        "dangerous_command.pipe_to_shell",
        "dangerous_command",
        re.compile(
            rf"\b{_NETWORK_TOOL}\b[^\n|;]*\|\s*(?:{_SHELL})\b"
            rf"|\b(?:ba)?sh\s+(?:-c\s+)?[\"']?\$\(\s*{_NETWORK_TOOL}\b"
            rf"|\b(?:ba)?sh\s+<\(\s*{_NETWORK_TOOL}\b",
            _I,
        ),
        "medium",
        "high",
        "Downloads code and runs it at once (curl | sh): nothing checks what arrives.",
    ),
    Rule(
        "dangerous_command.rm_root",
        "dangerous_command",
        re.compile(
            r"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+|-[a-zA-Z]*f[a-zA-Z]*\s+|--recursive\s+|--force\s+"
            r"|--no-preserve-root\s+)+(?:/|/\*|~/?|~/\*|\$HOME/?|\$\{HOME\}/?|\*)(?=[\s;&|\"'`)]|$)"
            r"|shutil\.rmtree\(\s*(?:['\"](?:/|~)['\"]|os\.path\.expanduser\(['\"]~['\"]\)"
            r"|Path\.home\(\))",
            re.MULTILINE,
        ),
        "high",
        "critical",
        "Deletes the whole file system or home directory.",
    ),
    Rule(
        "dangerous_command.reverse_shell",
        "dangerous_command",
        re.compile(
            r"/dev/(?:tcp|udp)/[\w.\-]+/\d+|\bn(?:c|cat|etcat)\b[^\n]*\s-[a-z]*[ec]\s"
            r"|\bpty\.spawn\(|\bbash\s+-i\s*[>&]|socket\.socket\([^\n]*\n(?:[^\n]*\n){0,6}"
            r"[^\n]*(?:dup2|subprocess|/bin/(?:ba)?sh)",
            _I,
        ),
        "critical",
        "critical",
        "A reverse shell: gives a remote machine a shell on the agent's host.",
    ),
    Rule(
        "dangerous_command.chmod_777",
        "dangerous_command",
        re.compile(r"\bchmod\s+(?:-R\s+)?0?777\b|\bos\.chmod\([^)]*0o777"),
        "medium",
        "high",
        "Makes files writable and executable by everyone (chmod 777).",
    ),
    Rule(
        "dangerous_command.disable_security",
        "dangerous_command",
        re.compile(
            r"\bsetenforce\s+0\b|\bufw\s+disable\b|\biptables\s+-F\b"
            r"|\bsystemctl\s+(?:stop|disable|mask)\s+(?:firewalld|apparmor|auditd|ufw|clamav\S*"
            r"|falcon-sensor|osqueryd)\b|Set-MpPreference\s+-Disable\w+"
            r"|\bspctl\s+--master-disable\b|\bcsrutil\s+disable\b",
            _I,
        ),
        "high",
        "high",
        "Switches off a security tool (firewall, SELinux, AppArmor, antivirus, audit).",
    ),
    Rule(
        "exfiltration.env_dump",
        "exfiltration",
        re.compile(
            rf"\b(?:env|printenv|set)\s*\|\s*{_NETWORK_TOOL}\b"
            rf"|\b{_NETWORK_TOOL}\b[^\n]*\$\(\s*(?:env|printenv|cat\s+[^)]*\.env)\s*\)"
            r"|(?:json\.dumps|str|dict)\(\s*os\.environ\s*\)|JSON\.stringify\(\s*process\.env\s*\)",
        ),
        "high",
        "high",
        "Sends environment variables or secrets over the network.",
    ),
    Rule(
        "obfuscation.decode_and_run",
        "obfuscation",
        re.compile(
            r"\b(?:eval|exec)\s*\(\s*(?:compile\(\s*)?(?:base64\.b\d+decode|atob|bytes\.fromhex"
            r"|codecs\.decode|zlib\.decompress|marshal\.loads|Buffer\.from)"
            r"|\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:(?:ba|z)?sh|python3?)\b"
            r"|-(?:enc|EncodedCommand)\s+[A-Za-z0-9+/=]{40,}",
            _I,
        ),
        "high",
        "high",
        "Decodes hidden code and runs it.",
    ),
)

# Credential files an agent has no business reading, and where they may be sent.
_CREDENTIAL_FILE = re.compile(
    r"(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+|expanduser\(['\"]~)/?\.(?:ssh/(?:id_\w+|"
    r"authorized_keys)|aws/credentials|docker/config\.json|kube/config|netrc|npmrc|pypirc"
    r"|git-credentials|gnupg|config/gcloud)|/etc/shadow\b"
)
_NETWORK_SINK = re.compile(
    rf"\b{_NETWORK_TOOL}\s|\brequests\.(?:post|put|get)\(|\burllib\.request|\bhttp\.client"
    r"|\bhttpx\.|\bsocket\.socket\(|\bfetch\(|\bsmtplib\.|\baxios\.|XMLHttpRequest",
    _I,
)
# What a `safe` script may not do (contract §21, capability mismatch).
_USES_NETWORK = re.compile(
    r"^[ \t]*(?:import|from)\s+(?:socket|requests|urllib|http\.client|httpx|aiohttp|ftplib|smtplib"
    r"|paramiko|websocket)\b|\bsocket\.socket\(|require\(['\"](?:https?|net|dgram|axios)['\"]\)"
    rf"|\bfetch\(|(?:^|[;&|]|\$\()[ \t]*{_NETWORK_TOOL}\s",
    re.MULTILINE,
)
_DELETES = re.compile(
    r"\bos\.(?:remove|unlink|rmdir|removedirs)\(|\bshutil\.rmtree\(|\.unlink\(|\.rmdir\("
    r"|\bfs\.(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync)\(|(?:^|[;&|])[ \t]*rm\s+-?\w*",
    re.MULTILINE,
)
_WRITES = re.compile(
    r"\bopen\([^)\n]*,\s*['\"][wax]b?\+?['\"]|\.write_(?:text|bytes)\(|\bfs\.(?:writeFile|"
    r"appendFile)(?:Sync)?\(|\bshutil\.(?:copy|move)\w*\(|\bos\.(?:rename|replace)\("
)
# Blobs long enough to hide a program, and what decoded code looks like.
_B64_BLOB = re.compile(r"[A-Za-z0-9+/]{160,}={0,2}")
_HEX_BLOB = re.compile(r"(?:\\x[0-9a-fA-F]{2}){60,}|\b[0-9a-fA-F]{160,}\b")
_CODE_WORDS = re.compile(
    r"\b(?:import\s+\w|exec\(|eval\(|subprocess|os\.system|/bin/(?:ba)?sh|curl\s|wget\s"
    r"|socket|require\(|function\s*\(|child_process|powershell|<script)",
    _I,
)
_HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_ADDRESSES_AGENT = re.compile(
    r"\b(?:assistant|agent|AI|LLM|model|Claude|GPT|Copilot)\b[^.]{0,80}\b(?:must|should|will|"
    r"always|never|now|instead|run|execute|send|read|upload|ignore|do)\b",
    _I,
)
_ZERO_SIZE = re.compile(
    r"style\s*=\s*[\"'][^\"']*(?:font-size\s*:\s*0(?![.\d]*[1-9])|display\s*:\s*none"
    r"|visibility\s*:\s*hidden|opacity\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*(?:white|#fff\b"
    r"|#ffffff))[^\"']*[\"'][^>]*>\s*[^<\s]",
    _I,
)
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]+")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\u180e\ufeff]")


def _finding(text: Text, rule_id: str, category: str, severity: str, at: int, msg: str) -> Finding:
    line = text.line_of(at)
    return Finding(
        rule_id=rule_id,
        severity=severity,
        category=category,
        path=text.path,
        line=line,
        excerpt=visible(text.line_text(line)),
        message=msg,
    )


def _pattern_findings(text: Text) -> Iterator[Finding]:
    for rule in RULES:
        severity = rule.code if text.kind == "code" else rule.prose
        if severity is None:
            continue
        for m in rule.pattern.finditer(text.body):
            yield _finding(text, rule.rule_id, rule.category, severity, m.start(), rule.message)


def _hidden_text(text: Text) -> Iterator[Finding]:
    body = text.body
    for m in _TAG_CHARS.finditer(body):
        hidden = "".join(chr(ord(c) - 0xE0000) for c in m.group(0) if 0xE0020 <= ord(c) < 0xE007F)
        yield _finding(
            text,
            "hidden_text.tag_characters",
            "hidden_text",
            "critical",
            m.start(),
            f"Invisible Unicode tag characters spell out text: {hidden[:80]!r}.",
        )
    for m in _BIDI.finditer(body):
        yield _finding(
            text,
            "hidden_text.bidi",
            "hidden_text",
            "high",
            m.start(),
            "A bidirectional control character: what is shown is not what is read.",
        )
    seen_lines: set[int] = set()
    for m in _ZERO_WIDTH.finditer(body):
        if m.start() == 0 and m.group(0) == "\ufeff":
            continue  # a byte-order mark
        if m.group(0) == "\u200d" and _joins_emoji(body, m.start()):
            continue
        line = text.line_of(m.start())
        if line not in seen_lines:
            seen_lines.add(line)
            yield _finding(
                text,
                "hidden_text.zero_width",
                "hidden_text",
                "medium",
                m.start(),
                "Zero-width characters: text a reader cannot see.",
            )
    if text.kind == "code":
        return
    for m in _HTML_COMMENT.finditer(body):
        inner = m.group(1)
        if (
            _INJECTION_RX.search(inner)
            or _ADDRESSES_AGENT.search(inner)
            or any(r.pattern.search(inner) for r in RULES[1:])
        ):
            yield _finding(
                text,
                "hidden_text.html_comment",
                "hidden_text",
                "high",
                m.start(),
                "An HTML comment (hidden when rendered) carries instructions.",
            )
    for m in _ZERO_SIZE.finditer(body):
        yield _finding(
            text,
            "hidden_text.zero_size",
            "hidden_text",
            "high",
            m.start(),
            "Text styled to be invisible when rendered (zero size, hidden or white).",
        )


def _joins_emoji(body: str, at: int) -> bool:
    before = body[at - 1 : at]
    after = body[at + 1 : at + 2]
    return bool(before and after) and all(
        unicodedata.category(c) == "So" or 0x1F000 <= ord(c) <= 0x1FAFF for c in (before, after)
    )


def _decoded(blob: str) -> str:
    try:
        if blob.startswith("\\x"):
            raw = bytes.fromhex(blob.replace("\\x", ""))
        elif re.fullmatch(r"[0-9a-fA-F]+", blob):
            raw = bytes.fromhex(blob)
        else:
            raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=False)
    except (ValueError, binascii.Error):
        return ""
    return raw.decode("utf-8", errors="ignore")


def _obfuscated(text: Text) -> Iterator[Finding]:
    for rx in (_B64_BLOB, _HEX_BLOB):
        for m in rx.finditer(text.body):
            if _CODE_WORDS.search(_decoded(m.group(0))):
                yield _finding(
                    text,
                    "obfuscation.encoded_code",
                    "obfuscation",
                    "high",
                    m.start(),
                    "A long encoded blob that decodes to code.",
                )


def _exfiltration(text: Text) -> Iterator[Finding]:
    sends = bool(_NETWORK_SINK.search(text.body))
    for m in _CREDENTIAL_FILE.finditer(text.body):
        if sends:
            yield _finding(
                text,
                "exfiltration.credential_file",
                "exfiltration",
                "high",
                m.start(),
                "Reads a credentials file in a file that also sends data over the network.",
            )
        else:
            yield _finding(
                text,
                "exfiltration.credential_file_read",
                "exfiltration",
                "medium",
                m.start(),
                "Reads a credentials file (keys, cloud or registry credentials).",
            )


def _capability(text: Text, script_class: str, declared: bool) -> Iterator[Finding]:
    """A script that runs as ``safe`` may not use the network, delete or write files."""
    if not text.is_script or script_class != "safe":
        return
    said = "declares class: safe" if declared else "runs as safe (no class declared)"
    checks = (
        (_USES_NETWORK, "network", "high" if declared else "medium", "uses the network"),
        (_DELETES, "deletes", "high" if declared else "medium", "deletes files"),
        (_WRITES, "writes", "medium" if declared else None, "writes files"),
    )
    for rx, what, severity, does in checks:
        m = rx.search(text.body)
        if m is not None and severity is not None:
            yield _finding(
                text,
                f"capability_mismatch.safe_{what}",
                "capability_mismatch",
                severity,
                m.start(),
                f"The skill {said}, but this script {does}.",
            )


def rule_findings(text: Text, *, script_class: str, class_declared: bool) -> Iterator[Finding]:
    """Every finding of the product's own rules in one file."""
    yield from _pattern_findings(text)
    yield from _hidden_text(text)
    yield from _obfuscated(text)
    yield from _exfiltration(text)
    yield from _capability(text, script_class, class_declared)

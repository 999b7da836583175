"""What a credential looks like, and the credentials a user writes inside a ``--tools`` source.

A key is known by its prefix (``KEY_PREFIXES``, the one list of them): ``redact_keys`` masks
whatever is shaped like one in a text. ``credentials_in`` names the secrets written in one
tool source, so that they can be held and masked wherever the source is written. Pure: no
I/O, no environment.
"""

from __future__ import annotations

import re
import shlex
from urllib.parse import unquote, unquote_plus

__all__ = [
    "KEY_PREFIXES",
    "credentials_in",
    "looks_like_key",
    "redact_keys",
    "secret_name",
    "source_url",
]

KEY_PREFIXES = (
    "sk-",  # OpenAI, Anthropic (sk-ant-), DeepSeek, OpenRouter (sk-or-)
    "or-",
    "gsk_",  # Groq
    "xai-",
    "AIza",  # Google
    "hf_",  # Hugging Face
    "r8_",  # Replicate
    "pplx-",  # Perplexity
    "nvapi-",  # NVIDIA
    "ghp_",  # GitHub: personal, OAuth, app, user-to-server, refresh, fine-grained tokens
    "gho_",
    "ghs_",
    "ghu_",
    "ghr_",
    "github_pat_",
    "glpat-",  # GitLab
    "xoxb-",  # Slack: bot and user tokens
    "xoxp-",
)
"""How the keys an MCP server or a provider is given begin."""
SHAPED_LENGTH = 16
"""Characters a prefixed word needs to be taken for a key: "sk-learn" is a word."""

_KEY = re.compile(r"(?<![A-Za-z0-9_-])(?:" + "|".join(map(re.escape, KEY_PREFIXES)) + r")[\w*-]+")
_RANDOM = re.compile(r"(?=[^A-Za-z]*[A-Za-z])(?=\D*\d)[A-Za-z0-9_-]{20,}")
"""A long mix of letters and digits: a token of no known prefix, as a URL path segment."""
_SECRET_WORDS = ("token", "key", "secret", "passw", "auth", "credential", "bearer")
_SWITCH = re.compile(r"(?:no|disable|skip|without)[-_]", re.I)
"""A flag that turns a secret off (--no-auth) takes no value: the next word is not one."""
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def redact_keys(text: str) -> str:
    """``text`` with anything shaped like a key (16+ characters) masked."""
    # OpenAI echoes the key it refused ("Incorrect API key provided: sk-...");
    # a report must never carry one (vector openai-401-incorrect-api-key-is-redacted).
    return _KEY.sub(lambda m: "[redacted]" if len(m[0]) >= SHAPED_LENGTH else m[0], text)


def looks_like_key(word: str) -> bool:
    """Whether ``word`` is, as a whole, shaped like a key: a known prefix, 16+ characters."""
    return len(word) >= SHAPED_LENGTH and _KEY.fullmatch(word) is not None


def secret_name(name: str) -> bool:
    """Whether a flag or variable named ``name`` (``--api-key``, ``GITHUB_PAT``) holds a
    secret: its name holds token, key, secret, passw, auth, credential or bearer, or the
    word pat."""
    bare = name.lstrip("-")
    if _SWITCH.match(bare):
        return False
    low = bare.lower()
    return any(word in low for word in _SECRET_WORDS) or "pat" in re.split(r"[^a-z0-9]+", low)


def source_url(source: str) -> str | None:
    """The URL of an MCP source spoken to over HTTP (``mcp:<URL>`` or the URL), else None."""
    url = source.removeprefix("mcp:")
    return url if url.startswith(("http://", "https://")) else None


def credentials_in(source: str) -> tuple[str, ...]:
    """The secrets written in the ``--tools`` source ``source``, as written (and decoded,
    where a URL encodes them), first seen first.

    In a URL (``mcp:<URL>`` or the URL, an MCP one or not): the userinfo's user and
    password, every query value, the fragment, and path segments shaped like a key; a
    source that is itself shaped like a key is one. On a stdio server's command line: the
    value of a flag (``--token=T``, ``--token T``, ``-token T``) or variable (``TOKEN=T``)
    named like a secret, the secrets of an argument that is a URL, and an argument shaped
    like a key.
    """
    if source.startswith("mcp:stdio:"):
        found = _in_command(source.removeprefix("mcp:stdio:"))
    else:
        # Any URL, not only the http(s) ones read: one refused (mcp:wss://…) is named in
        # the line that refuses it.
        found = _in_word(source.removeprefix("mcp:"))
    return tuple(dict.fromkeys(word for word in found if word))


def _in_url(url: str) -> list[str]:
    # Split by hand, not urlsplit: it raises on a malformed host, and a secret beside a
    # malformed host is still a secret.
    rest = url.split("://", 1)[-1]
    rest, _, fragment = rest.partition("#")
    rest, _, query = rest.partition("?")
    authority, _, path = rest.partition("/")
    userinfo = authority.rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    found = [*_decoded(user), *_decoded(password)]
    for piece in query.split("&") if query else ():
        name, equals, value = piece.partition("=")
        if equals:
            found += _decoded(value, plus=True)
        elif _shaped(unquote_plus(name)):
            found += _decoded(name, plus=True)  # a token given as the whole query
    for segment in path.split("/"):
        if _shaped(unquote(segment)):
            found += _decoded(segment)
    return found + _decoded(fragment)


def _in_command(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()  # an unclosed quote: read as the shell's words can't be
    found: list[str] = []
    waiting = False  # the word before was a flag named like a secret: its value comes next
    for word in words:
        if waiting and not word.startswith("-"):
            found.append(word)
            waiting = False
            continue
        waiting = False
        name, equals, value = word.partition("=")
        if equals and (name.startswith("-") or _VARIABLE.fullmatch(name)):
            found += [value] if secret_name(name) else _in_word(value)
        elif len(word) > 1 and word.startswith("-") and secret_name(word):
            waiting = True
        else:
            found += _in_word(word)
    return found


def _in_word(word: str) -> list[str]:
    if _SCHEME.match(word):
        return _in_url(word)
    return [word] if looks_like_key(word) else []


def _shaped(word: str) -> bool:
    return looks_like_key(word) or _RANDOM.fullmatch(word) is not None


def _decoded(text: str, *, plus: bool = False) -> list[str]:
    """``text`` as written, and as the server reads it when it is percent-encoded."""
    decoded = unquote_plus(text) if plus else unquote(text)
    return [text, decoded] if decoded != text else [text]

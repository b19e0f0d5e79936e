"""Secrets out of everything the harness writes or prints: one rule, applied at every boundary.

**Which names hold secrets.** A name is compared case-insensitively with `-` read as `_` (so the flag
`--api-key`, the server argument `api_key` and the variable `API_KEY` are one name). It is secret when it
is `HF_TOKEN`, `TOKEN` or `SECRET`, ends in `_TOKEN`, `_KEY`, `_SECRET` or `_PAT`, or contains `PASSWORD` or
`PASSWD` (`WANDB_API_KEY`, `MY_DB_PASSWD`, `GITHUB_PAT`, `--admin-api-key`, `ssl_keyfile_password`). `KEY`
and `PAT` alone are not (too common as plain words: a record's `key`). Suffixes are whole words: `SGLANG_MAX_TOKENS`, `SGLANG_SIMULATE_ACC_TOKEN_MODE`, `--api-key-file`,
`ssl_keyfile` and `image_path` are not secret. Names that end like a secret but are identifiers or counts are
not secret either: `config_key`, `golden_key`, `model_key`, `sort_key`, `*_PER_TOKEN`, `*_PER_<X>_TOKEN`,
`*_FIRST_TOKEN`, `*_SECOND_TOKEN`, `*_LAST_TOKEN`, `*_NEXT_TOKEN` and the tokenizer's special tokens (`bos_token`,
`eos_token`, ...). Only string values are secrets (numbers and booleans are never masked).

**Settings are judged more widely.** A variable of an environment (`env`), a server or simulator argument
(`args`, `--flag VALUE`) or a `NAME=VALUE` assignment holds a secret also when a word of its name contains
`KEY`, `TOKEN`, `SECRET`, `PASS`, `CREDENTIAL`, `AUTH`, `PRIVATE`, `COOKIE` or `SESSION` (`OPENAI_APIKEY`,
`AUTH_HEADER`, `PRIVATE_KEY_PEM`, `SGLANG_CREDENTIALS`, `PASSPHRASE`), unless the word is a count or a
component (`TOKENS`, `TOKENIZER`, `KEYFILE`, `PASSES`, `SESSIONS`), the name ends in `_FILE`, `_PATH`, `_DIR`,
`_MODE` or `_MAP` (it holds a location or a choice), or it is one of the identifiers above. There a value
that is a number or a boolean is kept (`--max-total-tokens 4096`, `--enable-streaming-session`). A recipe or
cluster profile may name more secret variables and arguments (`secret_names`, registered with
`add_secret_names`): those are secret wherever they appear.

**Secrets by shape**, wherever they appear: `Bearer <token>`, the body of a PEM block (`-----BEGIN ...-----`
to `-----END ...-----`), a URL's password and a secret-named query parameter, well-known token formats, and
the service tokens and secrets by syntax of `harness.redact_forms` (ODBC `Pwd=`, netrc `password`, `mysql -p`,
`Authorization:` with any scheme, docker's `"auth"`, Azure's `sig=`). A random-looking value after a
token-like name (`apiToken: ...`, `"auth": "..."`, `X-Api-Key: ...`) is masked in every syntax; a name ending
in an identifier word (`session_id`, `*_hash`) is never judged so. A variant name's mark of a secret
(`redacted-<8 hex digits>`, `harness.point.state.variant`) is kept as written.

**Settings by allow-list** (`harness.redact_plain`): in an environment (`env`, `server_env`, `-e NAME=VALUE`) and in
server arguments (`args`, `sim_args`), a value whose name is not on the allow-list is written as its `setting_hash`.

**What is replaced** by `<redacted>` (only text that is written or printed; what is launched keeps the real
values): the value of a secret-named variable, mapping key or `KEY=VALUE` assignment; the value after a
secret flag (`--api-key VALUE`, `--api-key=VALUE`) in argv lists and rendered command lines; the password
(or a lone token) in a URL's `user:pass@`; a secret-named URL query parameter (`?token=`, `&key=`,
`?api_key=`, `sig`, `signature`, `auth`); and anywhere, verbatim, a value registered with `remember` (the
plan's secret values, at least 6 characters), which is what keeps them out of logs that echo them.

`seal` is `redact_data` with numbered placeholders (`<redacted:1>`) and the values beside, so a file that travels
without its secrets (the Slurm sweep plan) can be `unseal`ed by the process that runs it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness.redact_forms import AUTH_SCHEMES, MAYBE, MYSQL_CLIENT, TOKEN_SHAPES, mask_forms, random_looking
from harness.redact_plain import SETTING_HASH, is_plain_arg, is_plain_env, setting_hash
from harness.redact_plain import override_outside_allow_list as _override_outside

REDACTED = "<redacted>"
MIN_REMEMBERED = 6
PLACEHOLDER = re.compile(r"<redacted(?::(\d+))?>")
# What a variant name holds in place of a secret's value (`harness.point.state.variant`): kept as written.
VARIANT_MARK = re.compile(r"redacted-[0-9a-f]{8}(?![0-9a-f])")   # also at the start of a path

_SECRET = re.compile(r"^(?:HF_TOKEN|TOKEN|SECRET)$|_(?:TOKEN|KEY|SECRET|PAT)$|_PWD?\d*$|PASSWORD|PASSWD")
_NOT_SECRET = re.compile(r"^(?:CONFIG|GOLDEN|MODEL|SORT)_KEY$"
                         r"|(?:^|_)(?:PER|FIRST|SECOND|LAST|NEXT|BOS|EOS|PAD|UNK|SEP|CLS|MASK)_TOKEN$"
                         r"|_PER_[A-Z]+_TOKEN$")
_QUERY_SECRET = frozenset({"TOKEN", "KEY", "SECRET", "SIG", "SIGNATURE", "AUTH", "PASSWORD", "PASSWD",
                           "X-AMZ-SIGNATURE", "X-AMZ-CREDENTIAL", "X-GOOG-SIGNATURE", "X-GOOG-CREDENTIAL"})
_SETTING_STEMS = ("KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH", "PRIVATE", "COOKIE", "SESSION")
_SETTING_WORDS_KEPT = frozenset({"TOKENS", "TOKENIZER", "TOKENIZERS", "DETOKENIZER", "TOKENIZATION", "KEYFILE",
                                 "PASSES", "SESSIONS", "BYPASS", "COMPASS", "AUTHOR", "AUTHORS"})
_SETTING_NOT_SECRET = re.compile(r"_(?:FILE|PATH|DIR|MODE|MAP)$|FORWARD_PASS")
_PLAIN_VALUE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|true|false|True|False|none|None|null")
_ENV_KEYS = frozenset({"env", "environment", "server_env"})
_SETTINGS_KEYS = _ENV_KEYS | {"args", "sim_args", "server_args"}
_ENV_FLAGS = frozenset({"-e", "--env", "--container-env"})   # a command's `-e NAME=VALUE`
_ENV_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_BEARER = re.compile(r"\b([Bb]earer)(\s+)([A-Za-z0-9._~+/=-]{4,})")
_PEM = re.compile(r"(-----BEGIN ([A-Z0-9 ]{1,64})-----)(.*?)(-----END \2-----|\Z)", re.DOTALL)

_QUOTED_OR_WORD = r"(?:'[^']*'|\"(?:[^\"\\]|\\.)*\"|[^\s'\",;)}\]]+)"  # quotes may span lines
_URL_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)([^\s/@:'\"]*)(?::([^\s/@'\"]*))?@")
_QUERY = re.compile(r"([?&;])([A-Za-z0-9_.-]+)=([^&#\s'\"]*)")
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9_-]*)(=|[ \t]+)((?!--?[A-Za-z])" + _QUOTED_OR_WORD + ")")
_ASSIGN = re.compile(r"(?<![\w.?&-])([A-Za-z_][A-Za-z0-9_.-]*)=(?!=)(" + _QUOTED_OR_WORD + ")")  # not `==`
_FLAG_NAME = re.compile(r"--?[A-Za-z][A-Za-z0-9_-]*")
_ASSIGN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_MAPPING = re.compile(r"([\"'])([A-Za-z_][A-Za-z0-9_-]*)\1(\s*:\s*)(\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')")
# `name: value` unquoted (an HTTP header, YAML, a log line); not a URL's `scheme://`.
_COLON = re.compile(r"(?<![\w.-])([A-Za-z_][A-Za-z0-9_.-]*)([ \t]*:[ \t]*)(?!//|=)(" + _QUOTED_OR_WORD + ")")
_ID_WORDS = frozenset({"ID", "IDS", "UUID", "NAME", "NAMES", "HASH", "DIGEST", "SHA", "SHA1", "SHA256", "MD5",
                       "FINGERPRINT", "COUNT", "TYPE", "KIND", "VERSION", "LEN", "LENGTH", "SIZE"})

_SLACK_HOOK = re.compile(r"(hooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9/_-]+)")
_BASIC = re.compile(r"\b([Bb]asic)(\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
_USER_FLAG = re.compile(r"(?<![\w-])(-u|--user|--proxy-user)(=|[ \t]+)(['\"]?)([^\s:'\"]+):([^\s'\"]+)")

# Every pattern below needs one of these (a secret name holds TOKEN, KEY, SECRET, PASS, PAT, ...): a fast path.
_MAYBE = re.compile(r"token|key|secret|pass|pat\b|_pw|@|sig|auth|credential|private|cookie|session|bearer|basic"
                    r"|-----BEGIN|hooks\.slack|-u\b|--user|--proxy-user" + MAYBE, re.IGNORECASE)

Mask = Callable[[str], str]

_remembered: set[str] = set()
_extra_names: set[str] = set()


def _norm(name: str) -> str:
    return name.lstrip("-").replace("-", "_").upper()


def is_secret_name(name: str) -> bool:
    """True when a variable, flag, argument or key of this name holds a secret (the rule above)."""
    norm = _norm(name)
    return (bool(_SECRET.search(norm)) and not _NOT_SECRET.search(norm)) or norm in _extra_names


def is_secret_setting_name(name: str) -> bool:
    """True when an environment variable or server argument of this name holds a secret (the wider rule for
    settings above: any word holding KEY, TOKEN, SECRET, PASS, CREDENTIAL, AUTH, PRIVATE, COOKIE, SESSION)."""
    norm = _norm(name)
    if is_secret_name(name):
        return True
    if _NOT_SECRET.search(norm) or _SETTING_NOT_SECRET.search(norm):
        return False
    return any(stem in word and word not in _SETTING_WORDS_KEPT
               for word in norm.split("_") for stem in _SETTING_STEMS)


def _setting_secret(name: str, value: str) -> bool:
    """A setting's value to mask: a secret-named setting whose value is not a plain number or boolean."""
    return is_secret_setting_name(name) and (is_secret_name(name) or not _PLAIN_VALUE.fullmatch(value.strip()))


def _token_named(name: str) -> bool:
    """A name after which a random-looking value is a secret (the general rule): a secret setting name that is
    not `KEY` alone, not only a session's, and does not end in an identifier word (`session_id`, `key_hash`)."""
    norm = _norm(name)
    words = [w for w in re.split(r"[_.]", norm) if w]
    if not words or norm == "KEY" or words[-1] in _ID_WORDS or not is_secret_setting_name(name):
        return False
    return is_secret_name(name) or any(stem in w for w in words for stem in _SETTING_STEMS if stem != "SESSION")


def _random_secret(name: str, value: str) -> bool:
    """A random-looking value (or HTTP basic credentials: docker's `"auth"`) after a token-like name."""
    return _token_named(name) and (random_looking(value) or (len(value) >= 8 and _basic_credentials(value)))


def add_secret_names(names: Iterable[str]) -> None:
    """Treat these names (variables, arguments, keys; a recipe's or cluster profile's `secret_names`) as secret
    from now on in this process."""
    _extra_names.update(_norm(n) for n in names if n)


def _mask(value: str) -> str:
    return REDACTED


def _hash(value: str) -> str:
    return setting_hash(redact_text(value))   # outside the allow-list: the text's hash, known secrets masked


def _keep(value: str, mask: Mask) -> str:
    """`mask(value)`, except that an empty value or a placeholder stays as it is."""
    return value if not value or PLACEHOLDER.fullmatch(value) or VARIANT_MARK.match(value) \
        or SETTING_HASH.fullmatch(value) else mask(value)


def _quoted(value: str, mask: Mask) -> str:
    """Mask a possibly quoted token, keeping its quotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[0] + _keep(value[1:-1], mask) + value[0]
    return _keep(value, mask)


def redact_text(text: str, mask: Mask = _mask) -> str:
    """Every secret in free text: URLs, flags, assignments, JSON/Python mappings, remembered values."""
    if not text:
        return text
    if not _MAYBE.search(text) and not _extra_names:
        return _replace_remembered(text, mask)
    text = _PEM.sub(lambda m: m.group(1) + (_keep(m.group(3), mask) if m.group(3).strip() else m.group(3))
                    + m.group(4), text)
    text = _BEARER.sub(lambda m: m.group(1) + m.group(2) + _keep(m.group(3), mask), text)
    text = _BASIC.sub(lambda m: m.group(0) if not _basic_credentials(m.group(3))
                      else m.group(1) + m.group(2) + _keep(m.group(3), mask), text)
    text = TOKEN_SHAPES.sub(lambda m: _keep(m.group(0), mask), text)
    text = mask_forms(text, lambda v: _keep(v, mask), _token_named)
    text = _SLACK_HOOK.sub(lambda m: m.group(1) + _keep(m.group(2), mask), text)
    text = _USER_FLAG.sub(lambda m: m.group(0) if m.group(5).isdigit()   # `-u 1000:1000` is a uid:gid
                          else m.group(1) + m.group(2) + m.group(3) + m.group(4) + ":" + _keep(m.group(5), mask),
                          text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + (
        f"{m.group(2)}:{_keep(m.group(3), mask)}@" if m.group(3) is not None else f"{_keep(m.group(2), mask)}@"),
        text)
    text = _QUERY.sub(lambda m: m.group(0) if not _query_secret(m.group(2))
                      else f"{m.group(1)}{m.group(2)}={_keep(m.group(3), mask)}", text)
    text = _FLAG.sub(lambda m: m.group(0) if not _setting_secret(m.group(1), _unquoted(m.group(3)))
                     else m.group(1) + m.group(2) + _quoted(m.group(3), mask), text)
    text = _ASSIGN.sub(lambda m: m.group(0) if not _assigns_secret(m.group(1), _unquoted(m.group(2)))
                       else f"{m.group(1)}={_quoted(m.group(2), mask)}", text)
    text = _MAPPING.sub(lambda m: m.group(0) if not (is_secret_name(m.group(2))
                                                     or _random_secret(m.group(2), _unquoted(m.group(4))))
                        else m.group(1) + m.group(2) + m.group(1) + m.group(3) + _quoted(m.group(4), mask), text)
    text = _COLON.sub(lambda m: m.group(0) if not _colon_secret(m.group(1), _unquoted(m.group(3)))
                      else m.group(1) + m.group(2) + _quoted(m.group(3), mask), text)
    return _replace_remembered(text, mask)


def _colon_secret(name: str, value: str) -> bool:
    """`name: value`: a secret name's value (not a number, boolean or HTTP scheme word), or a random-looking one
    after a token-like name (`X-Api-Key: ...`, `apiToken: ...`)."""
    if value.lower() in AUTH_SCHEMES or _PLAIN_VALUE.fullmatch(value):
        return False
    return is_secret_name(name) or _random_secret(name, value)


def _basic_credentials(word: str) -> bool:
    """`Basic <word>` is HTTP basic authentication when the word is base64 of `user:password`."""
    try:
        return b":" in base64.b64decode(word, validate=True)
    except (binascii.Error, ValueError):
        return False


def _replace_remembered(text: str, mask: Mask) -> str:
    for value in sorted(_remembered, key=len, reverse=True):
        if value in text:
            text = text.replace(value, mask(value))
    return text


def _assigns_secret(name: str, value: str) -> bool:
    """`NAME=` or an override path naming a secret (`server.env.HF_TOKEN=`) or outside the allow-list."""
    return bool(_ASSIGN_NAME.fullmatch(name)) and (_setting_secret(name.rsplit(".", 1)[-1], value)
                                                   or _override_outside(name))


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def redact_override(text: str, mask: Mask = _mask) -> str:
    """One `--set KEY=VALUE` override."""
    return redact_argv([text], mask)[0]


def override_holds_secret(text: str) -> bool:
    """True when one `--set KEY=VALUE` override holds a secret (by its key's name or its value's shape): what
    `redact_override` would change."""
    return redact_override(text) != text


def _query_secret(name: str) -> bool:
    return name.upper() in _QUERY_SECRET or is_secret_setting_name(name)


def redact_argv(argv: Sequence[str], mask: Mask = _mask, unknown: Mask | None = None) -> list[str]:
    """An argv list: the value after a secret flag, `--flag=VALUE`, `NAME=VALUE`, and secrets inside tokens; a
    variable's value after `-e`/`--env` by the allow-list (`unknown` for a value outside it)."""
    out: list[str] = []
    env_next = False               # the token after `-e`/`--env`: a variable, `NAME=VALUE`
    hide_next: str | None = None   # the secret flag whose value is the next token
    header: str | None = None      # a secret header's `Name:` whose value is the next token (after a scheme)
    mysql = netrc = False          # a MySQL client's arguments (`-pPASSWORD`), a netrc entry (`password PW`)
    for token in argv:
        if header is not None and not token.startswith("-"):
            if token.lower() in AUTH_SCHEMES and header.lower().endswith("authorization"):
                out.append(token)
                continue
            value = token.strip("\"'{}[],")
            secret = header.lower().endswith("authorization") or _colon_secret(header, value)
            out.append(token.replace(value, _keep(value, mask)) if secret and value else redact_text(token, mask))
            header = None
            continue
        header = None
        if env_next and _ENV_ASSIGN.fullmatch(token):
            name, _, value = token.partition("=")
            out.append(f"{name}={_env_value(name, value, mask, unknown)}")
            env_next = False
            continue
        env_next = token in _ENV_FLAGS
        mysql = mysql or bool(MYSQL_CLIENT.search(token))
        netrc = netrc or token in ("machine", "default")
        if (mysql and len(token) > 2 and token.startswith("-p") and not token.startswith("-p=")) or (
                netrc and out and out[-1] in ("password", "passwd")):
            out.append(token[:2] + _keep(token[2:], mask) if mysql else _keep(token, mask))
            continue
        name = token[:-1].strip("\"'{}[],") if token.endswith(":") else ""
        if _ASSIGN_NAME.fullmatch(name) and (name.lower().endswith("authorization") or is_secret_setting_name(name)):
            header = name
        # a secret flag's value; after a flag secret only by the wider rule, a next flag is no value (a switch)
        if hide_next is not None and (is_secret_name(hide_next)
                                      or not (token.startswith("-") and not _PLAIN_VALUE.fullmatch(token))):
            out.append(_keep(token, mask) if _setting_secret(hide_next, token) else token)
            hide_next = None
            continue
        hide_next = None
        name, sep, value = token.partition("=")
        if out and _pair_secret(out[-1], token):   # `-u user:pw`, `Basic <base64>` as two arguments
            user, _, password = token.rpartition(":") if out[-1].startswith("-") else ("", "", token)
            out.append(f"{user}:{_keep(password, mask)}" if user else _keep(token, mask))
        elif value.startswith("="):                 # `name==version`: a requirement, never a secret
            out.append(redact_text(token, mask))
        elif _FLAG_NAME.fullmatch(name) and is_secret_setting_name(name):
            out.append(f"{name}={_keep(value, mask)}" if sep and _setting_secret(name, value) else token)
            hide_next = None if sep else name
        elif sep and _assigns_secret(name, value):
            out.append(f"{name}={_keep(value, mask)}")
        else:
            out.append(redact_text(token, mask))
    return out


def _pair_secret(previous: str, token: str) -> bool:
    """The argument after `-u`/`--user` (`user:password`, not a numeric `uid:gid`), `Basic` or `Bearer`."""
    if previous in ("-u", "--user", "--proxy-user"):
        return ":" in token and not token.rpartition(":")[2].isdigit()
    if previous.lower().endswith("bearer"):
        return bool(token) and not token.startswith("-")
    return previous.lower().endswith("basic") and _basic_credentials(token)


def redact_env(env: Mapping[str, str], mask: Mask = _mask, unknown: Mask | None = None) -> dict[str, str]:
    """An environment: secrets masked, allow-listed values as text, any other as `unknown` (`_hash`)."""
    return {k: _env_value(k, v, mask, unknown) for k, v in env.items()}


def _env_value(name: str, value: str, mask: Mask, unknown: Mask | None) -> str:
    if _setting_secret(name, value):
        return _keep(value, mask)
    return redact_text(value, mask) if is_plain_env(name) else _keep(value, unknown or _hash)


def redact_data(value: Any, mask: Mask = _mask, unknown: Mask | None = None) -> Any:
    """Any JSON-like value: mappings by key name (settings by the allow-list), string lists as argv, strings as text."""
    if isinstance(value, Mapping):
        return {k: _secret_value(v, mask, unknown) if isinstance(k, str) and (
                    is_secret_name(k) or (isinstance(v, str) and _random_secret(k, v)))
                else _settings(v, k in _ENV_KEYS, mask, unknown) if k in _SETTINGS_KEYS and isinstance(v, Mapping)
                else redact_data(v, mask, unknown)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, str) for v in value):
            return redact_argv(value, mask, unknown)
        return [redact_data(v, mask, unknown) for v in value]
    if isinstance(value, str):
        return redact_text(value, mask)
    return value


def _settings(settings: Mapping[Any, Any], env: bool, mask: Mask, unknown: Mask | None) -> dict[Any, Any]:
    """An `env` or `args` mapping: strings by the rule for settings and the allow-list (a zip's lists too)."""
    def one(name: Any, v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return [one(name, x) for x in v]
        if not isinstance(v, str) or not isinstance(name, str):
            return redact_data(v, mask, unknown)
        if env:
            return _env_value(name, v, mask, unknown)
        if _setting_secret(name, v):
            return _keep(v, mask)
        return redact_text(v, mask) if is_plain_arg(name) else _keep(v, unknown or _hash)

    return {k: one(k, v) for k, v in settings.items()}


def _secret_value(value: Any, mask: Mask, unknown: Mask | None) -> Any:
    """The value under a secret-named key: strings masked (a list of them too, e.g. a zip's env column)."""
    if isinstance(value, str):
        return _keep(value, mask)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) or v is None for v in value):
        return [v if v is None else _keep(v, mask) for v in value]
    return redact_data(value, mask, unknown)


def secret_values(data: Any) -> set[str]:
    """Every secret value `redact_data` would mask in `data` (for `remember`)."""
    found: set[str] = set()

    def record(v: str) -> str:
        found.add(v)
        return REDACTED

    redact_data(data, record, lambda v: record(v) if random_looking(v) else REDACTED)
    return found


def remember(values: Iterable[str]) -> None:
    """Mask these values verbatim wherever they appear from now on in this process (short ones are skipped:
    they would mask ordinary text)."""
    _remembered.update(v for v in values if len(v) >= MIN_REMEMBERED)


def scrub_remembered(text: str) -> str:
    """Only the remembered values masked (for a server's own log, which the patterns were not written for)."""
    for value in sorted(_remembered, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def any_remembered() -> bool:
    return bool(_remembered)


def forget_all() -> None:
    """Drop the remembered values and the added secret names (tests)."""
    _remembered.clear()
    _extra_names.clear()


def seal(data: Any) -> tuple[Any, dict[str, str]]:
    """`redact_data` with numbered placeholders; returns the sealed copy and {number: value}."""
    numbers: dict[str, str] = {}

    def number(v: str) -> str:
        n = numbers.setdefault(v, str(len(numbers) + 1))
        return f"<redacted:{n}>"

    sealed = redact_data(data, number, number)
    return sealed, {n: v for v, n in numbers.items()}


def sealed_numbers(data: Any) -> set[str]:
    """The placeholder numbers left in sealed data."""
    found: set[str] = set()

    def note(s: str) -> str:
        found.update(m.group(1) for m in PLACEHOLDER.finditer(s) if m.group(1))
        return s

    _walk_strings(data, note)
    return found


def unseal(data: Any, values: Mapping[str, str]) -> Any:
    """Put the values back in place of their numbered placeholders (the others stay)."""
    def put(s: str) -> str:
        return PLACEHOLDER.sub(lambda m: values.get(m.group(1) or "", m.group(0)), s)

    return _walk_strings(data, put)


def _walk_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, Mapping):
        return {k: _walk_strings(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk_strings(v, fn) for v in value]
    return fn(value) if isinstance(value, str) else value

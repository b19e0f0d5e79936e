"""Secret forms recognised by their shape or their syntax, whatever they are called (`harness.redact` applies
them with its other rules).

**Well-known token formats** (`TOKEN_SHAPES`), masked whole: Hugging Face, GitHub, GitLab (`glpat-`, `glrt-`,
`glptt-`, `gldt-`, ...), Grafana `glsa_`, OpenAI `sk-`, Stripe, `whsec_` webhook secrets, AWS key ids, Google
(`AIza`, `GOCSPX-`), Slack `xox?-`/`xapp-`, npm, PyPI, JWTs, Atlassian `ATATT`, Linear `lin_api_`, Notion
`secret_`/`ntn_`, Doppler `dp.pt.`, Pulumi `pul-`, New Relic `NRAK-`, Sentry `sntrys_`, Docker Hub `dckr_pat_`,
Postman `PMAK-`, Supabase `sbp_`, Fly.io `fo1_`/`fm2_`, Discord bot tokens and Kubernetes bootstrap tokens
(`abcdef.0123456789abcdef`). This list is the second line: a setting's value is kept out by the allow-list of
`harness.redact_plain` whatever its shape.

**Service tokens**, masked whole: Google OAuth access tokens `ya29.…`, Vault tokens `hvs.`/`hvb.`/`hvr.…`,
Databricks `dapi…`, SendGrid `SG.<id>.<secret>`, Twilio account SIDs `AC…` and API keys `SK…` (32 hex digits; a
32-hex auth token written after a SID is masked too), DigitalOcean `dop_v1_`/`doo_v1_`/`dor_v1_…`, Shopify
`shpat_`/`shpca_`/`shppa_`/`shpss_…`, Hugging Face organisation tokens `api_org_…`, Telegram bot tokens
(`123456789:AA…`, also inside `api.telegram.org/bot<token>/`) and age secret keys `AGE-SECRET-KEY-1…`.

**Secrets by syntax**: the password of an ODBC/ADO connection string (`…;Pwd=…;`, `{…}` braces included); a
netrc entry's `password` (`machine host login user password …`); the password attached to a MySQL/MariaDB
client's `-p` (`mysql -u root -pPASSWORD`; a bare `-p` prompts and holds nothing); the credentials of an
`Authorization:`/`Proxy-Authorization:` header whatever its scheme (`Token …`, `Bearer …`, `Basic …`,
`ApiKey …`, none); HTTP Digest credentials (`Digest username="u", nonce="…", response="…"`: the `response`,
`nonce` and `cnonce` values); an Azure SAS signature `sig=…` wherever it starts (a SAS token written without its
`?`); and the private members of a JSON Web Key: `"d"` holding 43 or more base64url characters anywhere, and
`"d"`, `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"` and `"k"` in an object that has `"kty"` (quotes escaped or single too).

**Random-looking values** (`random_looking`): at least 16 characters without spaces, not a path or URL, with a
run of 12 or more letters and digits mixing both, a run of 20 or more letters of both cases, or a UUID; or 40 or
more characters of one base64 alphabet (`A-Za-z0-9+/=` or `A-Za-z0-9_-`) mixing letters and digits however they
are split (`wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`). The wider rule of `harness.redact` masks such a value
after any key-, token-, auth-, password-, secret- or credential-like name in any syntax, an assignment with spaces
included (`secret = …`, `api_token := "…"`, `credentials => …`); names ending in an identifier word (`_ID`,
`_NAME`, `_HASH`, `_SHA`, ...) never, and a name that is none of these (`commit`, `revision`, `git_commit`) is
never judged, so a commit's 40 hex digits stay readable.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Keep = Callable[[str], str]

# Values that are secrets whatever they are called: well-known token formats (the whole token is masked).
_WELL_KNOWN = (
    r"hf_[A-Za-z0-9]{20,}|api_org_[A-Za-z0-9]{20,}"           # Hugging Face (user, organisation)
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"  # GitHub
    r"|gl(?:pat|rt|ptt|dt|soat|cbt|imt|ffct|oas)-[A-Za-z0-9_-]{20,}|glsa_[A-Za-z0-9_]{32,}"  # GitLab, Grafana
    r"|sk-[A-Za-z0-9_-]{20,}|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{20,}"  # OpenAI, Stripe
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"                           # AWS access key id
    r"|AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}"  # Google key, client secret, OAuth
    r"|xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"  # Slack
    r"|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,}"          # npm, PyPI
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # JWT
    r"|AT(?:ATT|CTT)[A-Za-z0-9_=-]{20,}"                    # Atlassian
    r"|lin_(?:api|oauth)_[A-Za-z0-9]{32,}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}"  # Linear, Notion
    r"|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{32,}|pul-[a-f0-9]{40}"  # Doppler, Pulumi
    r"|NR(?:AK|II|JS)-[A-Za-z0-9]{20,}|sntry[su]_[A-Za-z0-9+/=_-]{20,}"  # New Relic, Sentry
    r"|dckr_pat_[A-Za-z0-9_-]{20,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}"  # Docker Hub, Postman
    r"|sbp_[a-f0-9]{40}|fo1_[A-Za-z0-9_-]{20,}|fm[12][ar]?_[A-Za-z0-9+/=_-]{20,}"  # Supabase, Fly.io
    r"|[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"  # Discord bot token
    r"|[a-z0-9]{6}\.(?=[a-z]{0,15}[0-9])[a-z0-9]{16}"        # Kubernetes bootstrap token
)
SERVICE_TOKENS = (
    r"|hv[sbr]\.[A-Za-z0-9_-]{20,}"                        # Vault
    r"|dapi[0-9a-f]{32}(?:-\d+)?"                          # Databricks
    r"|SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"     # SendGrid
    r"|(?:AC|SK)[0-9a-f]{32}"                              # Twilio account SID, API key
    r"|do[por]_v1_[a-f0-9]{64}"                            # DigitalOcean
    r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"                 # Shopify
    r"|AGE-SECRET-KEY-1[0-9A-Za-z]{20,}"                   # age
)
TOKEN_SHAPES = re.compile(r"(?<![A-Za-z0-9_-])(?:" + _WELL_KNOWN + SERVICE_TOKENS + r")(?![A-Za-z0-9_-])")
# What the fast path of `harness.redact` looks for (case-insensitive) before trying these forms.
MAYBE = (r"|ya29\.|hv[sbr]\.|dapi|SG\.|AC[0-9a-f]{8}|SK[0-9a-f]{8}|_v1_|shp|api_org|:AA|AGE-SECRET|pwd|mysql"
         r"|mariadb|machine|login|hf_|gh[pousr]_|github_pat|gl[a-z]{1,4}[-_]|sk-|[sr]k_|AKIA|ASIA|AIza|xox|xapp-|npm_"
         r"|pypi-|eyJ|whsec_|GOCSPX-|ATATT|ATCTT|lin_|ntn_|secret_|dp\.|pul-|NR(?:AK|II|JS)-|sntry|dckr_|PMAK-|sbp_"
         r"|fo1_|fm[12]|[MNO][A-Za-z0-9_-]{23,25}\.|[a-z0-9]{6}\.[a-z0-9]{16}|kty|[\"']d\\?[\"']"
         r"|digest[ \t]+[a-z_-]+[ \t]*=")

_TWILIO_AUTH = re.compile(r"(?<![A-Za-z0-9])(AC[0-9a-f]{32}|<redacted(?::\d+)?>)([:/\s,]+)([0-9a-f]{32})(?![0-9a-f])")
_TELEGRAM = re.compile(r"(?<![0-9])([0-9]{6,12}:AA[A-Za-z0-9_-]{30,})(?![A-Za-z0-9_-])")
_ODBC_VALUE = r"(\{(?:[^}]|\}\})*\}|[^;\s'\"]+)"
_ODBC_PWD = re.compile(r"(?i)(;\s*(?:pwd|password)\s*=\s*)" + _ODBC_VALUE
                       + r"|(?<![\w.-])((?:pwd|password)\s*=\s*)" + _ODBC_VALUE + r"(?=\s*;)")
_NETRC = re.compile(r"(?i)(\b(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)*\s+password\s+)([^\s'\"]+)")
_MYSQL = re.compile(r"(?<![\w-])((?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)"
                    r"(?:[ \t]+[^\s|;&]+)*?[ \t]+-p)([^\s'\";|&]+)")
MYSQL_CLIENT = re.compile(r"(?:^|/)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)$")
AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey", "api-key", "key",
                          "ssws", "oauth", "splunk", "sharedkey", "geniekey", "sso-key", "dsn"})
_AUTH_HEADER = re.compile(r"(?i)(\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?)"
                          r"(?:(" + "|".join(re.escape(s) for s in sorted(AUTH_SCHEMES, key=len, reverse=True))
                          + r")([ \t]+))?([^\s'\",;]+)")
_SAS_SIG = re.compile(r"(?<![\w.-])(sig=)([A-Za-z0-9%+/=_-]{8,})")
_DIGEST = re.compile(r"(?i)\bdigest[ \t]+(?=[a-z_-]+[ \t]*=)[^\n]*")   # `Digest name="value", ...`
_DIGEST_SECRET = re.compile(r"(?i)(\b(?:response|c?nonce)[ \t]*=[ \t]*\"?)([^\s\",]+)")
_Q = r"\\?[\"']"   # a quote, perhaps escaped (JSON inside a JSON string)
_JWK_OBJECT = re.compile(r"\{[^{}]*" + _Q + r"kty" + _Q + r"[^{}]*\}")
_JWK_PRIVATE = re.compile(r"(" + _Q + r"(?:d|p|q|dp|dq|qi|k)" + _Q + r"\s*:\s*" + _Q + r")([A-Za-z0-9_-]{16,})"
                          r"(?=" + _Q + ")")
_JWK_D = re.compile(r"(" + _Q + r"d" + _Q + r"\s*:\s*" + _Q + r")([A-Za-z0-9_-]{43,})(?=" + _Q + ")")
# `name = value`, `name := value`, `name => value` (spaces around the sign; `name=value` is `harness.redact`'s)
_SPACED_ASSIGN = re.compile(r"(?<![\w.-])([A-Za-z_][A-Za-z0-9_.-]*)([ \t]*(?::=|=>|=(?!=))[ \t]*)"
                            r"('[^'\n]*'|\"[^\"\n]*\"|[^\s'\",;)}\]]+)")

_RUN = re.compile(r"[A-Za-z0-9]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_NOT_TOKEN = re.compile(r"://|^[/~.]|\s")
_BASE64_LONG = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}|[A-Za-z0-9_-]{40,}")


def random_looking(value: str) -> bool:
    """A value that looks like a generated secret rather than a word, a path or a number (see above)."""
    if len(value) < 16 or _NOT_TOKEN.search(value):
        return False
    if _UUID.search(value):
        return True
    if _BASE64_LONG.fullmatch(value) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    for run in _RUN.findall(value):
        digits, letters = any(c.isdigit() for c in run), any(c.isalpha() for c in run)
        if len(run) >= 12 and digits and letters:
            return True
        if len(run) >= 20 and not digits and run != run.lower() and run != run.upper():
            return True
    return False


def mask_forms(text: str, keep: Keep, token_named: Callable[[str], bool]) -> str:
    """The forms by syntax above (service tokens are part of `harness.redact`'s token shapes); `token_named` says
    which names a random-looking value is masked after (`harness.redact`'s rule)."""
    text = _TWILIO_AUTH.sub(lambda m: m.group(1) + m.group(2) + keep(m.group(3)), text)
    text = _TELEGRAM.sub(lambda m: keep(m.group(1)), text)
    text = _ODBC_PWD.sub(lambda m: m.group(1) + keep(m.group(2)) if m.group(1) is not None
                         else m.group(3) + keep(m.group(4)), text)
    text = _NETRC.sub(lambda m: m.group(1) + keep(m.group(2)), text)
    text = _MYSQL.sub(lambda m: m.group(1) + keep(m.group(2)), text)
    text = _DIGEST.sub(lambda m: _DIGEST_SECRET.sub(lambda p: p.group(1) + keep(p.group(2)), m.group(0)), text)
    text = _AUTH_HEADER.sub(lambda m: m.group(0) if _digest_parameter(m.group(2), m.group(4))
                            else m.group(1) + (m.group(2) + m.group(3) if m.group(2) else "") + keep(m.group(4)), text)
    text = _SAS_SIG.sub(lambda m: m.group(1) + keep(m.group(2)), text)
    if "kty" in text:
        text = _JWK_OBJECT.sub(lambda m: _JWK_PRIVATE.sub(lambda p: p.group(1) + keep(p.group(2)), m.group(0)), text)
    if '"d' in text or "'d" in text:
        text = _JWK_D.sub(lambda m: m.group(1) + keep(m.group(2)), text)
    return _SPACED_ASSIGN.sub(lambda m: m.group(0) if not (token_named(m.group(1)) and random_looking(_bare(m.group(3))))
                              else m.group(1) + m.group(2) + _quoted(m.group(3), keep), text)


def _digest_parameter(scheme: str | None, value: str) -> bool:
    """`Authorization: Digest username=...`: the first parameter's name, not a credential (the Digest rule masks
    the secret parameters)."""
    return scheme is not None and scheme.lower() == "digest" and value.endswith("=")


def _bare(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def _quoted(value: str, keep: Keep) -> str:
    bare = _bare(value)
    return keep(value) if bare == value else value[0] + keep(bare) + value[-1]

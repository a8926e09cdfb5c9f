"""The secret scrubber's rules: which texts are credentials, found in linear time.

Every rule is a Python ``re`` pattern written under three constraints, so that scrubbing
costs time linear in the text whatever the text (``tests/test_redact_growth.py`` measures the
growth of every rule on adversarial inputs; ``python -m bench.redact`` reports µs per KB):

1. **Anchored starts.** A rule starts at a literal word (``authorization``, ``ghp_``,
   ``-----BEGIN``) or, for a rule that matches a run of characters, at the *start* of the
   run (a one-character look-behind: ``(?<![A-Za-z0-9])``), never at every position inside
   it. So no character is scanned again by attempts that start further along the same run.
2. **No backtracking bodies.** Every unbounded repetition is possessive (``*+``, ``++``) or
   runs over a class disjoint from what follows it; a repetition inside a repetition has
   disjoint first characters per iteration. An attempt that fails gives up at once.
3. **Bounded look-arounds.** Look-aheads and look-behinds have a fixed, small width.

Each rule keeps the label around a secret (``password=``, ``Authorization: Bearer``,
``postgres://user:``) and replaces only the secret itself by ``[REDACTED]``; applied twice
it changes nothing (stores scrub again at rest).

A rule runs only when one of its trigger words occurs in the (lower-cased) text; rules for
unlabeled formats (an AWS secret key alone, an Azure account key alone) trigger on a run of
at least 20 key characters. The formats follow the published detectors of maintained
scanners (``detect-secrets``, vendor documentation); the rules are our own.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from control_plane._kernel.portable_regex import portable

__all__ = [
    "CANARIES",
    "LONG_RUN",
    "REDACTED",
    "RULES",
    "Canary",
    "Rule",
    "normalize_escapes",
    "written",
]

REDACTED = "[REDACTED]"

Replacement = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True, slots=True)
class Rule:
    """One family of secrets: a linear-time pattern and what replaces a match."""

    name: str
    pattern: re.Pattern[str]
    repl: Replacement
    #: Lower-case words one of which occurs in every text the rule can match (``()`` with
    #: ``run=True``: texts holding a run of 20+ key characters).
    triggers: tuple[str, ...] = ()
    run: bool = False
    #: For a case-insensitive rule: the same pattern, case-sensitive, searched in the
    #: lower-cased text (several times faster: ``re`` skips ahead to a possible first
    #: character only in case-sensitive patterns). ``None`` for case-sensitive rules.
    low: re.Pattern[str] | None = field(default=None, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.pattern.flags & re.IGNORECASE:
            source = self.pattern.pattern.replace("REDACTED", "redacted")
            object.__setattr__(self, "low", re.compile(source, self.pattern.flags & ~re.IGNORECASE))

    def apply(self, text: str, low: str | None) -> str:
        """``text`` with this rule's matches replaced; ``low`` is ``text`` case-folded with
        the same length and positions (``redact._fold``), or ``None``."""
        if self.low is None or low is None:
            return self.pattern.sub(self.repl, text)
        parts: list[str] = []
        last = 0
        repl = self.repl
        for found in self.low.finditer(low):
            # The case-insensitive pattern matches the original text at the same place
            # (on folded text the two are the same language): its groups keep the case.
            match = self.pattern.match(text, found.start())
            if match is None:  # pragma: no cover - the two patterns agree on ASCII
                continue
            parts.append(text[last : match.start()])
            parts.append(repl(match) if callable(repl) else match.expand(repl))
            last = match.end()
        if not parts:
            return text
        parts.append(text[last:])
        return "".join(parts)


#: What each compiled rule pattern was as written (possessive notation), for the bench
#: and the tests that compare the two forms (:func:`written`).
_WRITTEN: dict[re.Pattern[str], str] = {}


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``pattern`` compiled in its portable form (:func:`portable`)."""
    compiled = re.compile(portable(pattern), flags)
    _WRITTEN[compiled] = pattern
    return compiled


def written(pattern: re.Pattern[str]) -> str:
    """The source of a pattern compiled by :func:`_c`, as written (possessive notation)."""
    return _WRITTEN.get(pattern, pattern.pattern)


# -- helpers -------------------------------------------------------------------------------


def _looks_secret(value: str) -> bool:
    """Whether a word after ``Bearer``/``Basic`` or in a URL's user part is a credential.

    Credentials carry digits, inner capitals, base64 padding or ``+/_``; ordinary words
    ("a basic example", "the token expired", ``ssh://git@host``) carry none of them.
    """
    if any(c.isdigit() or c in "+/_" for c in value):
        return True
    if value.endswith("=") and len(value) % 4 == 0:  # base64 padding
        return True
    return any(c.isupper() for c in value[1:])


def _keep_quotes(value: str) -> str:
    """``[REDACTED]`` with the value's own opening and closing quotes (escaped or not) kept."""
    head = ""
    i = 0
    while i < len(value) and value[i] == "\\":
        i += 1
    if i < len(value) and value[i] in "\"'":
        head = value[: i + 1]
        body_end = len(value)
        if len(value) > len(head) and value[-1] == value[i]:
            j = len(value) - 1
            while j > len(head) and value[j - 1] == "\\":
                j -= 1
            body_end = j
        return head + REDACTED + value[body_end:]
    return REDACTED


#: A header's name/value separator as it appears in text: ``: ``, ``=``, quoted and escaped
#: (``\"Authorization\": \"``), a repr of bytes or a tuple (``b'authorization', b'``), or a
#: literal ``\n`` between name and value (the repr of a header block).
_HEADER_SEP = (
    r"(?:\\{0,3}[\"'])?[ \t]{0,8}+(?:[:=,]|\\{1,3}[nr](?:\\{1,3}[nr])?)[ \t]{0,8}+"
    r"(?:[bBuU](?=[\"']))?(?:\\{0,3}[\"'])?[ \t]{0,8}+"
)

#: Between a command-line flag and its value: blanks, ``=``, or the ``', '`` of an argv
#: list's repr (``['curl', '-u', 'user:pass']``).
_ARG_SEP = r"(?:[ \t]++|=|[\"'],[ \t]*+[bBuU]?[\"'])"

#: Between the words of a command line: blanks, or the ``', '`` of an argv list's repr.
_WORD_SEP = r"(?:[ \t]++|[\"'],[ \t]*+[bBuU]?[\"'])"

#: A newline as a repr or JSON writes it, escaped once, twice or three times (each doubles
#: the backslashes): \n, \r\n, \\n, \\\\n.
_ESC_NL = r"(?:\\{1,4}r)?\\{1,4}n"

#: Characters of a credential after an auth scheme (RFC 7235 token68).
_CRED = r"[A-Za-z0-9._~+/=\-]"


def _authorization(match: re.Match[str]) -> str:
    return match.group("head") + REDACTED


def _scheme(match: re.Match[str]) -> str:
    scheme = match.group("scheme") or match.group("scheme2")
    gap = match.group("gap") or match.group("gap2")
    value = match.group("value")
    low = scheme.lower()
    strong = (low == "bearer" and (scheme == "Bearer" or len(value) >= 12)) or (
        low == "basic" and scheme == "Basic" and len(value) >= 8
    )
    if not (strong or _looks_secret(value)):
        return match.group(0)
    return f"{scheme}{gap}{REDACTED}"


_ESCAPED_SLASH = _c(r"\\{1,4}/")


def _userinfo(match: re.Match[str]) -> str:
    scheme, user, password = match.group("scheme"), match.group("user"), match.group("pw")
    if password is None:
        if not _looks_secret(user):
            return match.group(0)
        return f"{scheme}{REDACTED}@"
    first = _ESCAPED_SLASH.sub("/", password).split("/", 1)
    if len(first) == 2 and first[0].isdigit():  # host:port/path@... is not a password
        return match.group(0)
    return f"{scheme}{user}:{REDACTED}@"


def _userinfo_encoded(match: re.Match[str]) -> str:
    """:func:`_userinfo` for a percent-encoded URL (``%3A`` and ``%40`` kept as written)."""
    text, at = match.group(0), match.start()
    if match.group("pw") is None:
        if not _looks_secret(unquote(match.group("user"))):
            return text
        return match.group("scheme") + REDACTED + text[-3:]
    return text[: match.start("pw") - at] + REDACTED + text[-3:]


#: One quoted key and its quoted value inside a dict's braces.
_DICT_ITEM = _c(
    r"(?P<key>(?P<q>\\{0,3}[\"'])[^\"'\\\n]{1,256}+(?P=q)[ \t]*+:[ \t]*+)"
    r"(?!\\{0,3}[\"']\[REDACTED)(?P<val>\\{0,3}[\"'][^\"'\\\n]*+(?:\\{0,3}[\"'])?)"
)


def _cookie_dict(match: re.Match[str]) -> str:
    word = match.group(0)[:6]  # "cookie" as written
    if match.group("jar") is not None:
        return word + match.group("jar") + REDACTED
    body = _DICT_ITEM.sub(lambda m: m.group("key") + _keep_quotes(m.group("val")), match["body"])
    return word + match.group("head") + body


def _pair(match: re.Match[str]) -> str:
    return match.group("key") + _keep_quotes(match.group("val"))


def _flag(match: re.Match[str]) -> str:
    return match.group("head") + _keep_quotes(match.group("val"))


def _short_p(match: re.Match[str]) -> str:
    """``-pSecret`` outside a known tool: only values that look like passwords go; after a
    blank (``-p Secret``), only values shaped like a generated password."""
    value = match.group("val")
    if match.group("gap") is not None:
        if (
            len(value) < 8
            or any(c in "/:." for c in value)
            or not any(c.isupper() for c in value)
            or not any(c.islower() for c in value)
            or not any(c.isdigit() for c in value)
        ):
            return match.group(0)
        return match.group("head") + REDACTED
    if value.isdigit() or (value.isalpha() and value.islower()):
        return match.group(0)  # -p8080, -pthread, -pedantic
    symbol = any(c.isdigit() or c in "!@#$%^&*+=?~" for c in value)
    if not symbol and not any(c.isupper() for c in value[1:]):
        return match.group(0)
    return match.group("head") + REDACTED


#: Four base64 characters of three ASCII digits.
_B64_DIGITS = "[MNO][DTjz][AEIMQUYcgk][w-z0-5]"

#: A Twilio auth token inside the text after "twilio" (not the tail of a SID).
_TWILIO_TOKEN = _c(r"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])")


def _discord(match: re.Match[str]) -> str:
    """A Discord bot token when its first part is the base64 of a 17-20 digit id."""
    head = match.group(0).split(".", 1)[0]
    try:
        ident = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except ValueError:
        return match.group(0)
    if 17 <= len(ident) <= 20 and ident.isdigit():
        return REDACTED
    return match.group(0)


_NOT_A_PASSWORD = frozenset({"true", "false", "none", "null", "yes", "no", "ok", "fail"})


def _short_key(match: re.Match[str]) -> str:
    """``key=``/``auth=`` in a query when the value looks like a key; ``pass=`` unless a count."""
    key, value = match.group("key"), match.group("val")
    if key[0] in "pP":
        if value.isdigit() or value.lower() in _NOT_A_PASSWORD:
            return match.group(0)
    elif len(value) < 8 or "/" in value or "." in value or not _looks_secret(value):
        return match.group(0)
    return key + REDACTED


def _htpasswd(match: re.Match[str]) -> str:
    """htpasswd's password argument in batch mode (-b): the third argument, the second
    with -n (no file)."""
    flags = match.group("flags")
    if "b" not in flags:
        return match.group(0)
    name = "a2" if "n" in flags else "a3"
    if match.group(name) is None or match.group(name).startswith("[REDACTED"):
        return match.group(0)
    text, at = match.group(0), match.start()
    return text[: match.start(name) - at] + REDACTED + text[match.end(name) - at :]


def _mixed(match: re.Match[str]) -> str:
    """A bare 40-character key (AWS secret access key shape): upper and lower case, and a
    digit, a ``+`` or capitals as dense as random base64 has them (a random key lacks a
    digit about once in 900; a CamelCase name has capitals only where its words start)."""
    value = match.group(0)
    upper = sum(c.isupper() for c in value)
    if (
        upper
        and any(c.islower() for c in value)
        and (any(c.isdigit() for c in value) or "+" in value or upper * 5 >= len(value))
        and value.count("/") <= 6  # a path has more; a random key 7 about once in 10^7
    ):
        return REDACTED
    return value


# -- the key=value rule --------------------------------------------------------------------

#: Words whose value is a secret. Long words match anywhere (``PGPASSWORD``,
#: ``DB_PASSWORD``, ``GITHUB_TOKEN``); short ones only at a word start (``pw=``). Also
#: npm's ``_auth=`` and kubeconfig's ``client-key-data:``.
_KEY_WORDS = (
    r"pass(?:word|wd|phrase)|secret|token|api[_-]?key|access[_-]?key|account[_-]?key"
    r"|private[_-]?key[_-]?id|_key|-key|credentials?|session[_-]?id|sessionid|signature"
    r"|pwd(?<![A-Za-z0-9$]pwd)|pw(?<![A-Za-z0-9]pw)|sig(?<![A-Za-z0-9]sig)|_auth|key[_-]data"
    r"|x-auth|connect\.sid|phpsessid"
)

#: The separator between a key and its value: the key's closing quote, then ``=``, ``:``,
#: ``:=``, ``=>``, their percent- or unicode-escaped forms, or a literal ``\n``.
_PAIR_SEP = (
    r"(?:\\{0,3}[\"'\]]|%2[27])?[ \t]{0,16}+(?:\r?\n[ \t]{0,16}+)?"
    r"(?:[:=]{1,3}>?|%3[dDaA]|\\u003[dDaA]|\\{1,3}[nr])[ \t]{0,16}+(?:\r?\n[ \t]{0,16}+)?"
    r"(?:[bBuUrR@](?=[\"']))?"
)

#: A value: a JSON string (``\"`` escapes inside), a single-quoted string, a string quoted
#: with escaped quotes (JSON inside a message: ``\"x\\\"y\"``), else a bare word up to a
#: delimiter; an unterminated quote takes the rest of the word.
_PAIR_VALUE = (
    r"(?!\[REDACTED)(?:"
    r"\"(?:[^\"\\\n]++|\\.)*+\""
    r"|'(?:[^'\\\n]++|\\.)*+'"
    r"|\\{1,3}[\"'](?:[^\"'\\\n]++|\\++[^\"'\\\n]|\\{3}[\"'])*+\\{1,3}[\"']"
    r"|(?:\\{0,3}[\"'])?(?:[^\s\"'\\,;&}\]<>|)]++|\\\\|\\(?![nrt\"'\\])"
    r"|(?<=[A-Za-z0-9])\\{0,3}[\"'](?=[A-Za-z0-9]))++"
    r")"
)


#: How the name of an XML element or of a config key ends when its value is a secret
#: (``<Password>``, ``<ClientSecret>``, ``<SecretAccessKey>``, ``<SessionToken>``,
#: ``key="DbPassword"``); lower case, checked by look-behinds after a possessive name.
_NAME_ENDINGS = (
    *("password", "passwd", "passphrase", "pwd", "secret", "token"),
    *("secretkey", "secret_key", "accesskey", "access_key", "accountkey", "account_key"),
    *("apikey", "api_key", "api-key", "privatekey", "private_key"),
)
_ENDS_SECRET = "(?:" + "|".join(f"(?<={word})" for word in _NAME_ENDINGS) + ")"

#: An attribute value in a tag, quoted (``\"`` escapes of JSON kept outside the value).
_ATTR_VALUE = (
    r"(?!\\{0,3}[\"']\[REDACTED)(?:\\{0,3}\"[^\"\\\n]++(?:\\{0,3}\")?"
    r"|\\{0,3}'[^'\\\n]++(?:\\{0,3}')?|(?!\[REDACTED)[^\s\"'<>/\\]++)"
)

#: How the name of an environment variable or shell assignment ends when its value is a
#: secret (``DB_PASSWORD``, ``MYSQL_PWD``, ``CLIENT_SECRET``, ``id_token``, ``SSH_KEY``).
#: Not ``pwd`` alone: ``PWD=/home/app`` is the working directory.
_ENV_ENDINGS = (
    *("password", "passwd", "passphrase", "_pwd", "-pwd", "secret", "token", "_key", "-key"),
    *("apikey", "accesskey", "secretkey", "accountkey", "privatekey", "credentials"),
    *("session_id", "sessionid"),
)
_ENDS_ENV = "(?:" + "|".join(f"(?<={word})" for word in _ENV_ENDINGS) + ")"

#: Where an unquoted value of an assignment stops: whitespace, a quote, or a run of
#: ``& ; , ) } ] | < >`` followed by whitespace, a quote, the end, or the next ``name=``
#: (``?a=1&password=x&user=y``, ``Password=x;Server=db``). Anywhere else they are the
#: password's own (``Tr0ub4dor&3xQ!zz``, ``pa&&ss``, ``password=&abc``).
_SOFT_DELIMITER = r"[&;,)}\]|<>]++(?![\s\"'\\]|$|[a-z0-9_.%;\- ]{1,32}+=)"

#: One other attribute of a tag: ``id="pw"``, ``type='password'``.
_OTHER_ATTR = (
    r"[a-z_:\-]{1,32}+[ \t]*+=[ \t]*+(?:\\{0,3}\"[^\"\\<>\n]{0,128}+\\{0,3}\""
    r"|\\{0,3}'[^'\\<>\n]{0,128}+\\{0,3}')"
)

#: Inside one command of a tool that takes a password on its command line: the flag.
_TOOL_PASSWORD = _c(
    r"(?P<head>(?<![^\s\"',])-(?:p|a(?:" + _ARG_SEP + r")|p(?:" + _ARG_SEP + r")(?=[^-\s])))"
    r"(?!\[REDACTED)(?P<val>\"[^\"\n]*+\"?|'[^'\n]*+'?|[^\s\"']++)"
)


#: A key *name* that says password, passphrase or private key in the segment that ends
#: it, in any spelling: after a ``_ . -`` separator (``DB_PASS``, ``db.pass``,
#: ``user-pwd``, ``KEY_PW``) or a camelCase boundary (``dbPass``, ``userPwd``, ``rootPW``,
#: ``privKey``), abbreviations included (pass, pwd, pw). Not a word that only ends with
#: them (``bypass``, ``compass``, ``OLDPWD``), and not the short word alone (``pass=``,
#: ``pwd=``: short_key_param and key_value decide those). The long words (password,
#: secret, token, credential...) end a key anywhere already (key_value).
_SHORT_SECRET = r"(?:pass|pwd|pw|PASS|PWD|PW|Pass|Pwd|Pw)"
_SECRET_SEGMENT = (
    r"(?:(?<=[A-Za-z0-9][_.\-])" + _SHORT_SECRET + r"|(?<=[a-z0-9])(?:Pass|Pwd|Pw|PASS|PWD|PW)"
    r"|(?<![A-Za-z0-9])pass[_.\-]?(?:word|phrase)|(?<![A-Za-z0-9])PASS[_.\-]?(?:WORD|PHRASE)"
    r"|(?<![A-Z])Pass[_.\-]?(?:[Ww]ord|[Pp]hrase)"
    r"|(?<![A-Za-z0-9])priv(?:ate)?[_.\-]?[Kk]ey|(?<![A-Za-z0-9])PRIV(?:ATE)?(?:[_.\-]?KEY)"
    r"|(?<![A-Z])Priv(?:ate)?[_.\-]?Key)(?![A-Za-z0-9])"
)


def _secret_name(match: re.Match[str]) -> str:
    """A value under a key whose name says password (:data:`_SECRET_SEGMENT`): redacted,
    unless it is a count or a word such as ``true`` (``first_pass: 3``, ``dry_pass: no``)."""
    value = match.group("val").strip("\\\"'")
    if value.isdigit() or value.lower() in _NOT_A_PASSWORD:
        return match.group(0)
    return match.group("key") + _keep_quotes(match.group("val"))


_I = re.IGNORECASE

#: In order: multi-line and structured forms first (a PEM key, a header), then labelled
#: pairs and URLs, then bare vendor formats.
RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        # PEM (PKCS#1/#8, EC, DSA, encrypted), OpenSSH and PGP private keys, whole or cut
        # short: the body runs to the END line or to the end of the text.
        _c(
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[^-]++|-(?!----END ))*+(?:-----END [A-Z0-9 ]{0,40}+-{0,5}+)?"
        ),
        "[REDACTED PRIVATE KEY]",
        ("private key",),
    ),
    Rule(
        "putty_private_lines",
        # A PuTTY .ppk key's private part: the base64 lines after "Private-Lines: N", up to
        # the next "Name:" line (real newlines or a literal \n of JSON and reprs).
        _c(
            r"(?P<head>Private-Lines:[ \t]*+[0-9]{1,4}+(?:\r?\n|" + _ESC_NL + r"))(?!\[REDACTED)"
            r"[A-Za-z0-9+/=]++(?:(?:\r?\n|" + _ESC_NL + r")[A-Za-z0-9+/=]++(?=[\s\\\"']|$))*+"
        ),
        lambda m: m.group("head") + "[REDACTED PRIVATE KEY]",
        ("private-lines:",),
    ),
    Rule(
        "der_private_key",
        # A private key's base64 DER seen without its BEGIN line (pasted alone, or a PEM
        # percent-encoded into a URL or a form body): PKCS#1 RSA and DSA (MII...IBAAK),
        # PKCS#8 (MII...IBADAN), encrypted PKCS#8, SEC1 EC keys (MHcCAQEE, P-384, P-521),
        # Ed25519 (MC4CAQAw...), OpenSSH (b3BlbnNzaC1rZXktdjE, "openssh-key-v1"). Public
        # keys and certificates start otherwise. Continues over %2B, %2F, %0A and over
        # following lines of 60+ base64 characters.
        _c(
            # The first letter, then the look-behind (at a run's start, or after an encoded
            # newline): a literal first lets re skip ahead.
            r"(?:M(?:(?<![A-Za-z0-9+/]M)|(?<=%0[AaDd]M))"
            r"(?:II[A-Za-z0-9+/]{3}(?:IBAA[JK]|IBADAN|BOBgkqhkiG9w0BBQ0w)"
            r"|HcCAQEE|IGkAgEBBD|IHcAgEBBE|IGHAgEAMBMGByqGSM49|C4CAQAwBQYDK2Vw)"
            r"|b(?:(?<![A-Za-z0-9+/]b)|(?<=%0[AaDd]b))3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{16,}+"
            r"(?:(?:%2[BbFf]|%0[AaDd])[A-Za-z0-9+/]*+|(?:\r?\n|"
            + _ESC_NL
            + r")[A-Za-z0-9+/]{60,}+)*+"
            r"(?:={1,2}+|%3[Dd](?:%3[Dd])?)?"
        ),
        "[REDACTED PRIVATE KEY]",
        (
            *("ibaak", "ibaaj", "ibadan", "bobgkqhkig9w0bbq0w", "mhccaqee", "migkagebbd"),
            *("mihcagebbe", "mighageambmgbyqgsm49", "mc4caqawbqydk2vw", "b3blbnnzac1rzxktdje"),
        ),
    ),
    Rule(
        "authorization_header",
        # The credential of an Authorization header, whatever it looks like.
        _c(
            r"(?P<head>(?:proxy-)?authorization" + _HEADER_SEP + r"(?:[A-Za-z][A-Za-z0-9\-]*+"
            r"[ \t]++)?)(?![bBuU][\"'])" + _CRED + r"++(?![ \t]*+\[REDACTED)",
            _I,
        ),
        _authorization,
        ("authorization",),
    ),
    Rule(
        "cookie_header",
        # Cookie headers carry sessions: the whole value goes.
        _c(
            r"(?P<head>\b(?:set-)?cookie" + _HEADER_SEP + r")(?!\[REDACTED\](?:$|[\"'\r\n\\])|\{)"
            r"(?:[^\r\n\"'\\]++|\\(?![nr\"'\\]))++",
            _I,
        ),
        _authorization,
        ("cookie",),
    ),
    Rule(
        "cookie_dict",
        # Cookies as a dict (requests' cookies={'_gitlab_session': '...'}, JSON "cookies":
        # {"sid": "..."}): every quoted value inside the braces; and a cookie jar's repr
        # (<Cookie sid=... for .example.com/>).
        _c(
            # One literal first, so re skips to "cookie" (an alternation of a \b and a '<'
            # made it try every position: 54 µs/KB on a long text after "Cookie: ").
            r"cookie(?:(?<![a-z0-9_]cookie)(?P<head>s?(?:\\{0,3}[\"'])?[ \t]{0,8}+[:=][ \t]{0,8}+"
            r"\{)(?P<body>[^{}\n]++)|(?<=<cookie)(?P<jar> [^\s=<>]{1,256}+=)(?!\[REDACTED)"
            r"[^\s<>]++(?= for ))",
            _I,
        ),
        _cookie_dict,
        ("cookie",),
    ),
    Rule(
        "telegram_bot_token",
        # <bot id>:AA<33 characters>, alone or in the Bot API's URLs, where the path writes
        # it right after "bot" (https://api.telegram.org/bot123456789:AAH.../getMe; "bot"
        # is kept). Before auth_scheme, which would take "token 123456789" for the token.
        _c(r"(?:(?<=bot)|(?<![A-Za-z0-9_\-]))[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}"),
        REDACTED,
        (":aa",),
    ),
    Rule(
        "auth_scheme",
        # "bearer <token>", "basic <base64>", "token <pat>" outside a header, any case,
        # when the value carries a digit, '+/_=' or is 12+ characters long (no prose does).
        _c(
            r"\b(?P<scheme>bearer|basic|digest|token)(?P<gap>[ \t]++)"
            r"(?=[A-Za-z.~\-]*+[0-9+/_=]|" + _CRED + r"{12})" + _CRED + r"{3,}+",
            _I,
        ),
        lambda m: f"{m.group('scheme')}{m.group('gap')}{REDACTED}",
        ("bearer", "basic", "digest", "token"),
    ),
    Rule(
        "auth_scheme_cased",
        # The rest, decided by case: "Bearer abc" as a header writes it, or a value with
        # inner capitals ("token AbCdEf"). Case-sensitive, so prose ("token expired")
        # never reaches the callback.
        _c(
            r"\b(?:(?P<scheme>Bearer|Basic|Token|Digest)(?P<gap>[ \t]++)"
            r"|(?P<scheme2>bearer|basic|token|digest)"
            r"(?P<gap2>[ \t]++)(?=[a-z0-9._~+/=\-]*+[A-Z]))(?P<value>" + _CRED + r"{3,}+)"
        ),
        _scheme,
        ("bearer", "basic", "digest", "token"),
    ),
    Rule(
        "slack_webhook",
        _c(r"(?P<head>hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/+\-]++", _I),
        lambda m: m.group("head") + REDACTED,
        ("hooks.slack.com",),
    ),
    Rule(
        "discord_webhook",
        _c(r"(?P<head>discord(?:app)?\.com/api/webhooks/[0-9]++/)[A-Za-z0-9_\-]++", _I),
        lambda m: m.group("head") + REDACTED,
        ("/api/webhooks/",),
    ),
    Rule(
        "url_userinfo",
        # scheme://user:password@host, the password holding '/', '#', '@', '%'-escapes (up
        # to the last '@' of the word), or scheme://token@host; also with JSON's escaped
        # slashes (https:\/\/user:password@host, as PHP and Java encoders write URLs; in a
        # JSON string again, https:\\/\\/..., up to three times).
        _c(
            r"(?<![A-Za-z0-9+.\-])(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*+:(?://|\\{1,4}/\\{1,4}/))"
            r"(?P<user>[^\s/:@?#\"'<>\\]*+)"
            r"(?::(?P<pw>(?:(?:[^\s@\"'<>:]++|:(?!//|\\{1,4}/))*+@)++)|@)"
        ),
        _userinfo,
        ("://", "\\/"),
    ),
    Rule(
        "url_userinfo_encoded",
        # The same URL percent-encoded inside another URL's query (redirect=https%3A%2F%2F
        # user%3Apassword%40host): the user ends at %3A, the password at %40 (its own '@'
        # and ':' are encoded twice: %2540); an encoded '/', '?' or '#' ends the user part,
        # so an encoded plain URL with a later '@' stays.
        _c(
            r"(?<![a-z0-9+.\-])(?P<scheme>[a-z][a-z0-9+.\-]*+%3a%2f%2f)"
            r"(?P<user>(?:[^\s%&@/:?#\"'<>\\]++|%(?!3a|40|2f|3f|23)[0-9a-f]{2})*+)"
            r"(?:%3a(?!\[REDACTED)(?P<pw>(?:[^\s%&@/:?#\"'<>\\]++|%(?!40|2f)[0-9a-f]{2})++)%40"
            r"|%40)",
            _I,
        ),
        _userinfo_encoded,
        ("%3a%2f%2f",),
    ),
    Rule(
        "proxy_userinfo",
        # user:password@host without a scheme where a proxy is named: proxy: bob:pw@host:8080,
        # HTTPS_PROXY=..., pip --proxy ..., "proxy": "..." (up to the last '@'). Elsewhere
        # "a:b@c" is a logger's name and an address, not a credential.
        _c(
            r"(?P<head>proxy[a-z_\-]{0,16}+(?:\\{0,3}[\"'])?(?:[ \t]{1,8}+(?:[:=][ \t]{0,8}+)?"
            r"|[:=][ \t]{0,8}+)(?:\\{0,3}[\"'])?[^\s:@/\"'=\\]{1,64}+:(?!//))(?!\[REDACTED)"
            r"(?P<val>(?:[^\s@\"'<>\\]{1,128}+@){1,4}+)(?=[a-z0-9\[])",
            _I,
        ),
        lambda m: m.group("head") + REDACTED + "@",
        ("proxy",),
    ),
    Rule(
        "cli_user",
        # curl -u user:password, --user, --proxy-user; Samba's -U user%password (smbclient,
        # rpcclient, net). The user name is bounded (64 characters): unbounded, an attempt
        # at each of "-u=-u=-u=..." ran to the end of the text before failing; at 256 each
        # attempt still read up to 256 characters (24x the time for 8x the text in short runs).
        _c(
            r"(?P<head>(?<![\w-])(?:-u|-U|--user|--proxy-user)" + _ARG_SEP + r"?[\"']?"
            r"[^\s:%\"'@]{1,64}+[:%])(?P<val>[^\s\"']++)"
        ),
        lambda m: m.group("head") + REDACTED,
        ("-u", "--user", "--proxy-user"),
    ),
    Rule(
        "cli_flag",
        # --password X, --db-password=X, --token X, --client-secret X, keytool's
        # -storepass X / -keypass X (-srcstorepass, -destkeypass ...), plink's -pw X ...
        _c(
            r"(?P<head>-(?<![\w-]-)-?(?:[a-z0-9]++-){0,3}(?:password|passwd|pass|pwd|pw|token"
            r"|secret|api-?key|access-key|secret-key|client-secret|auth-token"
            r"|(?:src|dest)?(?:store|key)pass)" + _ARG_SEP + ")"
            r"(?!-)(?!\[REDACTED)(?P<val>\"[^\"\n]*+\"?|'[^'\n]*+'?|[^\s\"']++)",
            _I,
        ),
        _flag,
        ("--", "-pass", "-pw", "-token", "-secret", "-key", "storepass", "keypass"),
    ),
    Rule(
        "openssl_pass",
        # openssl's -passin pass:X, -passout pass:X ("pass:" kept; env:, file:, fd: and
        # stdin name where the password is, not the password). -pass pass:X is cli_flag's.
        _c(
            r"(?P<head>-pass(?<![\w-]-pass)(?:in|out)" + _ARG_SEP + r"[\"']?pass:)"
            r"(?!\[REDACTED)(?P<val>[^\s\"']++)",
            _I,
        ),
        _flag,
        ("-pass",),
    ),
    Rule(
        "rdp_password",
        # xfreerdp /p:X (and /password:X), the Windows-style flag after whitespace.
        _c(
            r"(?P<head>(?<![^\s\"',])/p(?:assword)?:)(?!\[REDACTED)"
            r"(?P<val>\"[^\"\n]*+\"?|'[^'\n]*+'?|[^\s\"']++)",
            _I,
        ),
        _flag,
        ("/p:", "/password:"),
    ),
    Rule(
        "sql_password",
        # CREATE USER ... IDENTIFIED BY 'x' (MySQL, Oracle, also unquoted), IDENTIFIED
        # WITH plugin BY 'x', PostgreSQL's [WITH] [ENCRYPTED] PASSWORD 'x' (quoted only:
        # "the password is too short" is prose); the quotes escaped in a repr or JSON too.
        _c(
            r"(?P<head>\bidentified(?:[ \t]++with[ \t]++[a-z0-9_]{1,64}+)?[ \t]++by"
            r"(?:[ \t]++password)?[ \t]++|\bpassword[ \t]++(?=\\{0,3}[\"']))"
            r"(?!\\{0,3}[\"']?\[REDACTED)(?P<val>\\{0,3}'(?:[^'\\\n]++|'')*+(?:\\{0,3}')?"
            r"|\\{0,3}\"(?:[^\"\\\n]++|\"\")*+(?:\\{0,3}\")?|[^\s\"'\\;,)]++)",
            _I,
        ),
        _flag,
        # Both forms hold one of these ("password" alone would run it on every password=).
        ("identified", "password ", "password\t"),
    ),
    Rule(
        "oracle_connect",
        # Oracle's user/password[@connect]: SQL*Plus and the loader and Data Pump tools
        # (sqlplus -s scott/tiger@//db:1521/orcl, also as an argv list), their userid=
        # parameter, and the thin/OCI JDBC URL (jdbc:oracle:thin:scott/tiger@db:1521:orcl).
        # Only after those words: "scott/tiger" in prose or org/repo@v4 stay.
        _c(
            # Each branch starts with its word (the look-behind after it), so re skips to a
            # candidate: \b first made it try every position (77 µs/KB on a long text).
            r"(?P<head>(?:(?:sqlplus(?<![a-z0-9_]sqlplus)|sqlldr(?<![a-z0-9_]sqlldr)"
            r"|expdp(?<![a-z0-9_]expdp)|impdp(?<![a-z0-9_]impdp))(?:"
            + _WORD_SEP
            + r"-[a-z]++)*+"
            + _WORD_SEP
            + r"(?:userid=)?|jdbc:oracle:(?<![a-z0-9_]jdbc:oracle:)[a-z0-9]{1,16}+:"
            r"|userid=(?<![^\s\"']userid=))"
            r"\"?[a-z0-9_$#.]{1,64}+\"?/)(?!\[REDACTED)"
            r"(?P<val>\"[^\"\n]*+\"|[^\s@/\"']++)(?=@|[\s\"',;]|$)",
            _I,
        ),
        lambda m: m.group("head") + REDACTED,
        ("sqlplus", "sqlldr", "expdp", "impdp", "jdbc:oracle:", "userid="),
    ),
    Rule(
        "cli_tool_password",
        # mysql -pSECRET (and the MariaDB tools), redis-cli -a SECRET, sshpass -p SECRET,
        # docker/podman login -p SECRET (elsewhere -p is a port: docker run -p 8080:80):
        # the whole command (to the end of the line or a shell separator) is matched once,
        # possessively, and its password flag replaced inside it.
        _c(
            r"\b(?:mysql(?:dump|admin|import|sh)?|mariadb(?:-dump|-admin)?|redis-cli|sshpass"
            r"|(?:docker|podman|nerdctl|buildah)[ \t]++login)\b[^\n|;&]*+",
            _I,
        ),
        lambda m: _TOOL_PASSWORD.sub(_flag, m.group(0)),
        ("mysql", "mariadb", "redis-cli", "sshpass", "docker", "podman", "nerdctl", "buildah"),
    ),
    Rule(
        "cli_short_p",
        # -pSECRET anywhere else, when the value looks like a password; -p SECRET (spaced:
        # elsewhere a port, a path, a profile, a plugin) only when the value is shaped like
        # a generated password: 8+ characters mixing capitals, small letters and digits,
        # no '/', ':' or '.' (ssh -p 2222, docker run -p 127.0.0.1:80:80, pytest -p xdist).
        _c(
            r"(?P<head>-p(?<![\w-]-p)(?P<gap>[ \t]++|[\"'],[ \t]*+[bBuU]?[\"'])?)"
            r"(?P<val>[^\s\"'\-\[][^\s\"']{3,}+)"
        ),
        _short_p,
        ("-p",),
    ),
    Rule(
        "htpasswd_batch",
        # htpasswd -b[c] file user PASSWORD, htpasswd -nb user PASSWORD (batch mode takes
        # the password on the command line; without -b it is prompted for).
        _c(
            r"htpasswd(?<![a-z0-9_]htpasswd)(?P<flags>(?:[ \t]++-[A-Za-z]++)*+)"
            r"[ \t]++(?P<a1>[^\s\-][^\s]*+)[ \t]++(?P<a2>[^\s]++)(?:[ \t]++(?P<a3>[^\s]++))?",
            _I,
        ),
        _htpasswd,
        ("htpasswd",),
    ),
    Rule(
        "xml_element",
        # <Password>s3cr3t</Password>, <ClientSecret>, <SecretAccessKey>, <SessionToken>,
        # <ns:password>, maven's <password>: an element whose name ends with a secret's
        # word; its text up to the next tag goes (never a self-closing <Password/>).
        _c(
            r"(?P<head><[a-z0-9_.:\-]{1,64}+" + _ENDS_SECRET + r"(?:[ \t\r\n][^<>]{0,256}+)?"
            r"(?<!/)>)(?P<val>[^<]++)",
            _I,
        ),
        lambda m: m.group("head") + REDACTED,
        ("pass", "pwd", "secret", "token", "key"),
    ),
    Rule(
        "xml_attribute_pair",
        # .NET config <add key="DbPassword" value="..."/>, an HTML form's
        # name="password" value="..." (one other attribute may stand between them).
        _c(
            r"(?P<head>\b(?:key|name)[ \t]*+=[ \t]*+(?P<q>\\{0,3}[\"'])[a-z0-9_.:\-\[\]]{1,64}+"
            + _ENDS_SECRET
            + r"(?P=q)(?:[ \t\r\n]++"
            + _OTHER_ATTR
            + r")?[ \t\r\n]++value[ \t]*+=[ \t]*+)"
            r"(?P<val>" + _ATTR_VALUE + ")",
            _I,
        ),
        _flag,
        ("value",),  # in every match (the secret words alone would run it on every key=)
    ),
    Rule(
        "env_assignment",
        # An environment-style or shell assignment (DB_PASSWORD=..., export X_TOKEN=...,
        # 'PGPASSWORD=...' in an argv, a .env line): the name starts a word and ends with a
        # secret's word, and the unquoted value runs to whitespace or a quote, delimiters
        # inside it included (DB_PASSWORD=Tr0ub4dor&3xQ!zz), short of the next name=.
        # Inside a URL query or a connection string (?a=1&password=..., ;Password=...)
        # key_value's value, which stops at every delimiter, applies instead.
        _c(
            r"(?P<key>(?<![^\s\"'])[a-z0-9_.\-]{1,64}+" + _ENDS_ENV + r"[ \t]{0,16}+=(?![=>])"
            r"[ \t]{0,16}+)(?!\[REDACTED)(?P<val>(?:[^\s\"'\\&;,)}\]|<>]++|"
            r"(?<=[A-Za-z0-9])\\{0,3}[\"'](?=[A-Za-z0-9])|"
            + _SOFT_DELIMITER
            + r"|\\\\|\\(?![nrt\"'\\]))++)",
            _I,
        ),
        _pair,
        ("pass", "pwd", "secret", "token", "key", "credential", "session"),
    ),
    Rule(
        "yaml_block_scalar",
        # A YAML block scalar under a secret's key (password: |, client_secret: >-): the
        # indented lines that follow, up to a line indented less (real newlines, or the
        # literal \n of a repr, escaped again or not). Only "key: |" with one blank, as
        # YAML is written.
        _c(
            r"(?P<head>(?:" + _KEY_WORDS + r")(?:\\{0,3}[\"'])?: [|>][0-9+\-]{0,2}+[ \t]{0,64}+"
            r"(?:#[^\r\n\\]{0,256}+)?(?:\r?\n(?P<ind>[ \t]++)|" + _ESC_NL + r"(?P<ind2>[ \t]++)))"
            r"(?!\[REDACTED)(?(ind)[^\r\n]++(?:\r?\n(?:[ \t]*+\r?\n)*+(?P=ind)[^\r\n]*+)*+"
            r"|(?:[^\\\r\n]++|\\++(?![rn]))++(?:"
            + _ESC_NL
            + r"(?P=ind2)(?:[^\\\r\n]++|\\++(?![rn]))*+)*+)",
            _I,
        ),
        lambda m: m.group("head") + REDACTED,
        (": |", ": >"),
    ),
    Rule(
        "key_value",
        # password=..., "api_key": "...", DB_PASSWORD=..., AccountKey=...;, sig=...&,
        # password%3D..., \"token\": \"...\", PGPASSWORD=..., MYSQL_PWD=...
        _c(r"(?P<key>(?:" + _KEY_WORDS + r")" + _PAIR_SEP + r")(?P<val>" + _PAIR_VALUE + r")", _I),
        _pair,
        (
            *("pass", "secret", "token", "key", "credential", "session", "signature"),
            *("pw", "sig", "_auth", "key_data", "key-data", "x-auth", "connect.sid", "phpsessid"),
        ),
    ),
    Rule(
        "secret_key_name",
        # A key whose name ends in a password's word in any spelling (DB_PASS=...,
        # "dbPass": "...", user-pwd: ..., ?db_pass=...&, rootPW=..., privKey: ...), with
        # any separator key_value takes (=, :, JSON's ": ", YAML's ": ", a query's =).
        _c(r"(?P<key>" + _SECRET_SEGMENT + _PAIR_SEP + r")(?P<val>" + _PAIR_VALUE + r")"),
        _secret_name,
        ("pass", "pw", "priv"),
    ),
    Rule(
        "short_key_param",
        # The short keys key_value leaves alone (they name other things too): a URL query's
        # key=, auth=, pass= (Google and Trello API keys, Firebase's auth=, ?user=&pass=),
        # and pass= as a word (user=bob pass=...). A key= or auth= value goes only when it
        # looks like a key (8+ characters, a digit or an inner capital, no '/' or '.': not
        # key=lambda, ?key=media/a.png); a pass= value unless it is a count (pass=3).
        _c(
            r"(?P<key>(?:key(?<=[?&;]key)|auth(?<=[?&;]auth)|pass(?<![^?&;\s\"']pass))=)(?![=>])"
            r"(?!\[REDACTED)(?P<val>[^\s&#\"'<>\\;,)}\]|]{1,512}+)",
            _I,
        ),
        _short_key,
        ("key=", "auth=", "pass="),
    ),
    Rule(
        "docker_auth",
        # Docker's config.json: "auth": "<base64 of user:password>" (also in a repr or
        # escaped JSON); only a base64 value with a capital or a digit, so "auth":
        # "required" stays.
        _c(
            r"(?P<key>(?<![A-Za-z0-9_])\\{0,3}[\"']auth\\{0,3}[\"'][ \t]*+:[ \t]*+\\{0,3}[\"'])"
            r"(?P<val>[A-Za-z0-9+/]{8,}+={0,2}+)(?=\\{0,3}[\"'])",
            _I,
        ),
        lambda m: m.group(0) if m.group("val").islower() else m.group("key") + REDACTED,
        ("auth",),
    ),
    Rule(
        "netrc",
        # .netrc / _netrc: machine host login user password secret (one line or several).
        _c(
            r"(?P<head>\blogin[ \t\r\n]++[^\s]{1,256}+[ \t\r\n]++password[ \t\r\n]++)"
            r"(?!\[REDACTED)(?P<val>[^\s]++)",
            _I,
        ),
        lambda m: m.group("head") + REDACTED,
        ("login",),
    ),
    Rule(
        "crypt_hash",
        # A password hash in crypt(3) form (a shadow line, a user row): md5crypt $1$,
        # sha256crypt $5$, sha512crypt $6$ (rounds= too), bcrypt $2a$/$2b$/$2x$/$2y$,
        # yescrypt $y$. Offline-crackable, so it goes whole, salt and all.
        _c(
            r"\$(?<![A-Za-z0-9$]\$)(?:[156]\$(?:rounds=[0-9]{1,9}+\$)?[./A-Za-z0-9]{1,16}+\$"
            r"[./A-Za-z0-9]{22,86}+|2[abxy]\$[0-9]{2}\$[./A-Za-z0-9]{53}"
            r"|y\$[./A-Za-z0-9]{1,16}+\$[./A-Za-z0-9]{1,64}+\$[./A-Za-z0-9]{43})(?![./A-Za-z0-9])"
        ),
        REDACTED,
        ("$1$", "$5$", "$6$", "$2a$", "$2b$", "$2x$", "$2y$", "$y$"),
    ),
    Rule(
        "jwt",
        # Header and payload (a JSON object each: "eyJ"), the signature when present (a
        # token cut short still goes).
        _c(
            r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}+\.ey[A-Za-z0-9_\-]{5,}+"
            r"(?:\.[A-Za-z0-9_\-]*+)?"
        ),
        REDACTED,
        ("eyj",),
    ),
    Rule(
        "aws_access_key_id",
        _c(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA"
            r"|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
        REDACTED,
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "a3t"),
    ),
    Rule("google_api_key", _c(r"(?<![A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{35}+"), REDACTED, ("aiza",)),
    Rule(
        "github_token",
        _c(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_[A-Za-z0-9_]{30,}+)"),
        REDACTED,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(
        "gitlab_token",
        _c(
            r"(?<![A-Za-z0-9_\-])(?:glpat|gldt|glft|glsoat|glrt|glptt|glcbt|glimt|glagent"
            r"|gloas)-[A-Za-z0-9_\-]{20,}+"
        ),
        REDACTED,
        ("gl",),
    ),
    Rule("npm_token", _c(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}+"), REDACTED, ("npm_",)),
    Rule("huggingface_token", _c(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}+"), REDACTED, ("hf_",)),
    Rule(
        "pypi_token",
        _c(r"(?<![A-Za-z0-9_\-])pypi-AgE[A-Za-z0-9_\-]{50,}+"),
        REDACTED,
        ("pypi-",),
    ),
    Rule(
        "sendgrid_key",
        _c(r"(?<![A-Za-z0-9_\-])SG\.[A-Za-z0-9_\-]{16,}+\.[A-Za-z0-9_\-]{16,}+"),
        REDACTED,
        ("sg.",),
    ),
    Rule(
        "slack_token",
        _c(r"(?<![A-Za-z0-9_\-])(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}+"),
        REDACTED,
        ("xox", "xapp-"),
    ),
    Rule(
        "stripe_key",
        _c(
            r"(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}+|whsec_[A-Za-z0-9]{20,}+)"
        ),
        REDACTED,
        ("sk_", "rk_", "whsec_"),
    ),
    Rule(
        "sk_dash_key",
        # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-api03-...) and look-alikes.
        _c(r"(?<![A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{20,}+"),
        REDACTED,
        ("sk-",),
    ),
    Rule(
        "vendor_prefixed",
        # HashiCorp Vault hvs./hvb./hvr. tokens, Google OAuth GOCSPX- client secrets and
        # ya29. access tokens, Databricks dapi<32 hex>, Atlassian ATATT3 API tokens, age
        # AGE-SECRET-KEY-1 keys, Square EAAA access tokens, Mailchimp <32 hex>-us<N>, Doppler
        # dp.pt./dp.st.<env>./dp.ct./dp.sa./dp.scim./dp.audit. tokens.
        _c(
            r"(?<![A-Za-z0-9_\-])(?:hv[sbr]\.[A-Za-z0-9_\-]{24,}+|GOCSPX-[A-Za-z0-9_\-]{24,}+"
            r"|ya29\.[A-Za-z0-9_\-][A-Za-z0-9_.\-]{19,}+|dapi[a-h0-9]{32}(?:-[0-9])?"
            r"|ATATT3[A-Za-z0-9_\-=]{20,}+|AGE-SECRET-KEY-1[0-9A-Z]{20,}+"
            r"|EAAA[A-Za-z0-9_\-+=]{56,}+|[0-9a-f]{32}-us[0-9]{1,2}"
            r"|dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{1,64}+\.)?[A-Za-z0-9]{30,64}+)"
            r"(?![A-Za-z0-9])"
        ),
        REDACTED,
        (
            *("hvs.", "hvb.", "hvr.", "gocspx-", "ya29.", "dapi", "atatt3"),
            *("age-secret-key-1", "eaaa", "-us"),
            *("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
        ),
    ),
    Rule(
        "azure_ad_client_secret",
        # An Entra ID (Azure AD) application's client secret: three characters, a digit,
        # "Q~", then 31-34 more (the published detectors' format).
        _c(
            r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"
            r"(?![A-Za-z0-9_~.\-])"
        ),
        REDACTED,
        ("q~",),
    ),
    Rule(
        "vendor_misc",
        # Square, Shopify, DigitalOcean, Twilio API key SIDs.
        _c(
            r"(?<![A-Za-z0-9_\-])(?:sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}+"
            r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[por]_v1_[a-f0-9]{64}"
            r"|SK[0-9a-f]{32}(?![A-Za-z0-9]))"
        ),
        REDACTED,
        ("sq0", "shp", "_v1_", "sk"),
    ),
    Rule(
        "twilio_auth_token",
        # A Twilio auth token is 32 hex characters, like any MD5: only within a line's 128
        # characters after the word "twilio" (SIDs, "AC"/"SM" + 32 hex, stay). One match
        # runs over every "twilio" less than 128 characters after the last (each starts a
        # window) and ends past a word, so no window is cut short by the previous one.
        _c(
            r"twilio(?<![a-z0-9_]twilio)(?:(?:(?!twilio)[^\r\n]){0,128}+twilio)*+[^\r\n]{0,128}+[A-Za-z0-9]{0,32}+",
            _I,
        ),
        lambda m: _TWILIO_TOKEN.sub(REDACTED, m.group(0)),
        ("twilio",),
    ),
    Rule(
        "discord_bot_token",
        # <base64 of the bot's numeric id>.<6-character timestamp>.<27-38-character HMAC>.
        # The id's 17-20 ASCII digits are 4-character groups [MNO][DTjz][AEIMQUYcgk][w-z0-5]
        # (and a 2- or 3-character tail): an attempt fails within a character or two, and
        # a leading class lets re skip ahead (2x faster on a traceback than a look-behind
        # first). The callback decodes the id to be sure.
        _c(
            r"[MNO](?<![A-Za-z0-9_\-.][MNO])[DTjz][AEIMQUYcgk][w-z0-5](?:" + _B64_DIGITS + "){4}"
            r"(?:"
            + _B64_DIGITS
            + r"(?:[MNO][DTjz][AEIMQUYcgk]|[MNO][AQgw])?|[MNO][DTjz][AEIMQUYcgk])"
            r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}+(?![A-Za-z0-9_\-])"
        ),
        _discord,
        run=True,
    ),
    Rule(
        "key_body",
        # Key material seen without its BEGIN line (a traceback's kept tail starting inside
        # a PEM or OpenSSH key, a key pasted alone): three or more lines of 60-76 base64
        # characters. Whole base64-wrapped blobs (a certificate) go too; never prose.
        _c(
            r"(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{60,76}+(?:\r?\n|" + _ESC_NL + r")){3,}+"
            r"[A-Za-z0-9+/=]{0,76}+"
        ),
        REDACTED,
        run=True,
    ),
    Rule(
        "azure_account_key",
        # An Azure storage account key alone: 88 base64 characters ending in '=='.
        _c(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])"),
        REDACTED,
        run=True,
    ),
    Rule(
        "aws_secret_key",
        # An AWS secret access key alone: 40 base64 characters mixing cases and digits
        # (a hex SHA-1 of the same length has no capitals: it stays).
        _c(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])"),
        _mixed,
        run=True,
    ),
)

#: A run of characters a bare key is made of: gates the ``run`` rules.
LONG_RUN = _c(r"[A-Za-z0-9+/_\-]{20}")

_ESCAPED = _c(r"\\u00(3[0-9]|4[1-9a-fA-F]|5[0-9aA]|5[fF]|6[1-9a-fA-F]|7[0-9aA])")


def normalize_escapes(text: str) -> str:
    """``text`` with ``\\u00XX`` escapes of letters, digits and ``_`` decoded
    (``\\u0070assword`` -> ``password``), so an escaped key is still a key."""
    if "\\u00" not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


# -- canaries: one secret per rule, checked at start-up (redact.require_scrubber) ----------


def _filler(n: int, chars: str = "", step: int = 7) -> str:
    """``n`` characters cycling through ``chars`` (letters and digits by default): key
    material of the right shape, built rather than written (no literal secret in the code)."""
    pool = chars or "aZ3kQ9mX2pL7vR4tN8bW5cY6dH1fJ0gS"
    return "".join(pool[(i * step + 3) % len(pool)] for i in range(n))


_B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_ID = base64.b64encode(b"412345678901234567").decode().rstrip("=")
_PEM_LINE = _filler(64, _B64_CHARS)


@dataclass(frozen=True, slots=True)
class Canary:
    """A text holding a secret one rule must remove, and what must stay around it."""

    rule: str
    text: str
    secret: str
    kept: str = ""


def _canary(rule: str, text: str, secret: str, kept: str = "") -> Canary:
    return Canary(rule, text.replace("{s}", secret), secret, kept)


_S = _filler(24)
CANARIES: tuple[Canary, ...] = (
    _canary(
        "private_key",
        "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
        _PEM_LINE,
    ),
    _canary("putty_private_lines", "Private-Lines: 2\n{s}\nPrivate-MAC: 00", _PEM_LINE),
    _canary("der_private_key", "key {s} end", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + _S),
    _canary("authorization_header", "Authorization: Digest {s}", _S, "Authorization: "),
    _canary("cookie_header", "Cookie: sid={s}", _S, "Cookie: "),
    _canary("cookie_dict", "cookies={'sid': '{s}'}", _S, "'sid'"),
    _canary("telegram_bot_token", "bot{s}/getMe", "123456789:AA" + _filler(33)),
    _canary("auth_scheme", "sent bearer {s}", "x" + _S),
    _canary("auth_scheme_cased", "Basic {s}", _filler(12)),
    _canary("slack_webhook", "https://hooks.slack.com/services/{s}", "T0/B1/" + _S),
    _canary("discord_webhook", "https://discord.com/api/webhooks/12345/{s}", _S),
    _canary("url_userinfo", "postgres://app:{s}@db:5432/x", "kqj#5qp4x", "@db:5432"),
    _canary(
        "url_userinfo_encoded",
        "GET /cb?redirect=https%3A%2F%2Fbob%3A{s}%40host%2F",
        "Bw7secretX",
        "%40host",
    ),
    _canary("proxy_userinfo", "HTTPS_PROXY=bob:{s}@proxy:3128", "Pw7" + _S, "@proxy"),
    _canary("cli_user", "curl -u bob:{s} https://x", "Pw7" + _S),
    _canary("cli_flag", "app --db-password {s} --port 1", "Pw7" + _S, "--port 1"),
    _canary("openssl_pass", "openssl rsa -passin pass:{s} -in k", "Pw7" + _S),
    _canary("rdp_password", "xfreerdp /u:bob /p:{s} /v:h", "Pw7" + _S),
    _canary("sql_password", "CREATE USER app IDENTIFIED BY '{s}';", "Pw7" + _S),
    _canary(
        "oracle_connect",
        "Command '['sqlplus', '-s', 'app/{s}@db']' returned non-zero exit status 1.",
        "kqj#5qp4x",
        "@db",
    ),
    _canary("cli_tool_password", "mysql -u root -p{s} db", "Pw7" + _S),
    _canary("cli_short_p", "tool -p{s}", "Pw7#" + _S),
    _canary("htpasswd_batch", "htpasswd -b file bob {s}", "Pw7" + _S),
    _canary("xml_element", "<ClientSecret>{s}</ClientSecret>", "Pw7" + _S),
    _canary("xml_attribute_pair", '<add key="DbPassword" value="{s}"/>', "Pw7" + _S),
    _canary("env_assignment", "DB_PASSWORD={s} ./run", "Tr0ub4dor&3xQ!zz", " ./run"),
    _canary(
        "yaml_block_scalar",
        "client_secret: |-\n  v2kNR2OMka\n  {s}\nnext: 1",
        "akMO2RNk2v",
        "next: 1",
    ),
    _canary("key_value", "Password={s};Server=db", "abc1", ";Server=db"),
    _canary("secret_key_name", "DB_PASS={s} dbPw: x", "abc1", " dbPw: "),
    _canary("short_key_param", "GET /v1?key={s}&q=1", "Ab3" + _S, "&q=1"),
    _canary("docker_auth", '{"auth": "{s}"}', base64.b64encode(b"bob:Pw7x9q").decode()),
    _canary("netrc", "machine h login bob password {s}", "Pw7" + _S),
    _canary("crypt_hash", "root:{s}:19000:0", "$6$saltsalt$" + _filler(86)),
    _canary("jwt", "token={s}", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0." + _S),
    _canary(
        "aws_access_key_id", "id {s}", "AKIA" + _filler(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    ),
    _canary("google_api_key", "k {s}", "AIza" + _filler(35)),
    _canary("github_token", "t {s}", "ghp_" + _filler(36)),
    _canary("gitlab_token", "t {s}", "glpat-" + _filler(20)),
    _canary("npm_token", "t {s}", "npm_" + _filler(36)),
    _canary("huggingface_token", "t {s}", "hf_" + _filler(34)),
    _canary("pypi_token", "t {s}", "pypi-AgE" + _filler(60)),
    _canary("sendgrid_key", "t {s}", "SG." + _filler(22) + "." + _filler(43)),
    _canary("slack_token", "t {s}", "xoxb-" + _filler(30)),
    _canary("stripe_key", "t {s}", "sk_live_" + _filler(24)),
    _canary("sk_dash_key", "t {s}", "sk-ant-api03-" + _filler(40)),
    _canary("vendor_prefixed", "t {s}", "hvs." + _filler(24)),
    _canary("azure_ad_client_secret", "t {s}", "abc8Q~" + _filler(34)),
    _canary("vendor_misc", "t {s}", "shpat_" + _filler(32, "0123456789abcdef")),
    _canary("twilio_auth_token", "twilio token {s}", _filler(32, "0123456789abcdef")),
    _canary("discord_bot_token", "t {s}", _B64_ID + "." + _filler(6) + "." + _filler(27)),
    _canary("key_body", "{s}\n", "\n".join([_PEM_LINE] * 3)),
    _canary("azure_account_key", "k {s}", _filler(86, _B64_CHARS) + "=="),
    _canary("aws_secret_key", "k {s} x", _filler(40)),
)

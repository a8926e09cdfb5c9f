"""Generators of secrets by family (the families of gitleaks' rules and detect-secrets'
plugins), each sample random and in the vendor's real format, and of ordinary text.

``FAMILIES``: name -> a function of a :class:`random.Random` returning ``(text, secret)``:
a line a system prints holding one freshly generated secret. ``HELD_OUT`` names the
families written after the scrubber's mechanism was done (scored apart, see
docs/redaction.md). ``ordinary(rng)``: a text that holds no secret.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable

__all__ = ["FAMILIES", "HELD_OUT", "ordinary"]

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
Gen = Callable[[random.Random], tuple[str, str]]


def pick(rng: random.Random, chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def mixed(rng: random.Random, chars: str, n: int) -> str:
    """``n`` characters with a capital, a small letter and a digit."""
    while True:
        out = pick(rng, chars, n)
        if all(any(kind(c) for c in out) for kind in (str.isupper, str.islower, str.isdigit)):
            return out


def password(rng: random.Random) -> str:
    core = mixed(rng, ALNUM, rng.randrange(8, 16))
    cut = rng.randrange(1, len(core))
    return core[:cut] + rng.choice(["", "#", "!", "%", "$", "^", "*", "-", "_"]) + core[cut:]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(
        json.dumps({"sub": str(rng.randrange(10**6)), "n": pick(rng, ALNUM, 8)}).encode()
    )
    return f"{head}.{body}.{_b64url(rng.randbytes(32))}"


def _pem(rng: random.Random) -> tuple[str, str]:
    """A PEM private key in a line; the secret is its body (the labels are not)."""
    body = base64.encodebytes(rng.randbytes(rng.randrange(200, 600))).decode().strip()
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    return _line(rng, f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"), body


def _line(rng: random.Random, secret: str) -> str:
    """``secret`` inside one of the lines an error message or a log carries."""
    shapes = [
        "request failed with {s}",
        "config: {s} rejected",
        "ValueError: bad credential {s!r}",
        "{s}",
        "  at line 3: '{s}'",
    ]
    return rng.choice(shapes).format(s=secret)


def _vendor(make: Callable[[random.Random], str]) -> Gen:
    def gen(rng: random.Random) -> tuple[str, str]:
        secret = make(rng)
        return _line(rng, secret), secret

    return gen


def _aws_secret_alone(rng: random.Random) -> tuple[str, str]:
    secret = pick(rng, B64, 40)
    shapes = [
        "botocore: signature mismatch for {s}",
        "export AWS_SECRET={s}",
        "credentials: AKIA{i} {s}",
        '["{s}"]',
        "{s}",
    ]
    ident = pick(rng, string.ascii_uppercase + "234567", 16)
    return rng.choice(shapes).format(s=secret, i=ident), secret


def _connection(rng: random.Random) -> tuple[str, str]:
    pw = password(rng)
    user = pick(rng, string.ascii_lowercase, 5)
    host = pick(rng, string.ascii_lowercase, 6) + ".db.invalid"
    shapes = [
        f"Server={host};Database=app;User Id={user};Password={pw};Encrypt=true",
        f"Data Source={host};Initial Catalog=app;User ID={user};Pwd={pw};",
        f"DRIVER={{ODBC Driver 18}};SERVER={host};UID={user};PWD={pw};",
        f"jdbc:postgresql://{host}:5432/app?user={user}&password={pw}&ssl=true",
        f"jdbc:sqlserver://{host}:1433;databaseName=app;user={user};password={pw};",
        f"psycopg2.OperationalError: host={host} port=5432 dbname=app user={user} password={pw}",
        f"postgresql://{user}:{pw}@{host}:5432/app",
        f"mongodb+srv://{user}:{pw}@{host}/app?retryWrites=true",
        f"sqlplus -s {user}/{pw}@{host}:1521/ORCL",
        f"Command '['sqlplus', '-s', '{user}/{pw}@{host}']' returned non-zero exit status 1.",
        f"dsn='host={host} user={user} password={pw} sslmode=require'",
    ]
    return rng.choice(shapes), pw


FAMILIES: dict[str, Gen] = {
    "aws_access_key_id": _vendor(
        lambda r: r.choice(["AKIA", "ASIA"]) + pick(r, string.ascii_uppercase + "234567", 16)
    ),
    "github_token": _vendor(
        lambda r: r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + pick(r, ALNUM, 36)
    ),
    "github_fine_grained": _vendor(lambda r: "github_pat_" + pick(r, ALNUM + "_", 82)),
    "gitlab_token": _vendor(lambda r: "glpat-" + pick(r, ALNUM + "-_", 20)),
    "slack_token": _vendor(
        lambda r: (
            r.choice(["xoxb-", "xoxp-"])
            + f"{r.randrange(10**11, 10**12)}-{r.randrange(10**11, 10**12)}-"
            + pick(r, ALNUM, 24)
        )
    ),
    "slack_webhook": _vendor(
        lambda r: (
            "https://hooks.slack.com/services/T"
            + pick(r, string.ascii_uppercase + string.digits, 8)
            + "/B"
            + pick(r, string.ascii_uppercase + string.digits, 8)
            + "/"
            + pick(r, ALNUM, 24)
        )
    ),
    "stripe_key": _vendor(
        lambda r: r.choice(["sk_live_", "rk_live_", "sk_test_"]) + pick(r, ALNUM, 24)
    ),
    "openai_key": _vendor(
        lambda r: (
            r.choice(["sk-", "sk-proj-"]) + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20)
        )
    ),
    "anthropic_key": _vendor(lambda r: "sk-ant-api03-" + pick(r, ALNUM + "-_", 93) + "AA"),
    "google_api_key": _vendor(lambda r: "AIza" + pick(r, ALNUM + "-_", 35)),
    "jwt": _vendor(_jwt),
    "private_key": _pem,
    "sendgrid_key": _vendor(
        lambda r: "SG." + pick(r, ALNUM + "-_", 22) + "." + pick(r, ALNUM + "-_", 43)
    ),
    "huggingface_token": _vendor(lambda r: "hf_" + pick(r, ALNUM, 34)),
    "pypi_token": _vendor(lambda r: "pypi-AgEIcHlwaS5vcmc" + pick(r, ALNUM + "-_", 60)),
    "azure_storage_key": _vendor(lambda r: pick(r, B64, 86) + "=="),
    # Held out (written after the mechanism was done):
    "aws_secret_key_alone": _aws_secret_alone,
    "db_connection_string": _connection,
    "npm_token": _vendor(lambda r: "npm_" + pick(r, ALNUM, 36)),
}

HELD_OUT = ("aws_secret_key_alone", "db_connection_string", "npm_token")


def ordinary(rng: random.Random) -> str:
    """A text that holds no secret: paths, URLs, hashes, ids, timestamps, versions."""
    word = pick(rng, string.ascii_lowercase, rng.randrange(3, 9))
    shapes = [
        lambda: f"/usr/lib/python3.11/site-packages/{word}/{word}_{rng.randrange(99)}.py",
        lambda: (
            f"https://example.com/{word}/{rng.randrange(10**6)}?page={rng.randrange(9)}&sort=asc"
        ),
        lambda: f"commit {hashlib.sha1(rng.randbytes(8)).hexdigest()}",
        lambda: f"sha256:{hashlib.sha256(rng.randbytes(8)).hexdigest()}",
        lambda: f"request id {uuid.UUID(int=rng.getrandbits(128), version=4)}",
        lambda: f"media/{_b64url(rng.randbytes(rng.randrange(9, 24)))}.jpg",
        lambda: (
            f"{rng.randrange(2000, 2030)}-0{rng.randrange(1, 9)}-1{rng.randrange(9)}"
            f"T12:0{rng.randrange(9)}:00Z"
        ),
        lambda: f"{word} {rng.randrange(9)}.{rng.randrange(20)}.{rng.randrange(30)} installed",
        lambda: f"git@github.com:{word}/{word}-{rng.randrange(99)}.git",
        lambda: f"the {word} token expired; use the password reset page",
        lambda: f"docker run -p {rng.randrange(1024, 9999)}:80 {word}:latest",
        lambda: f"blob {hashlib.md5(rng.randbytes(8)).hexdigest()} size={rng.randrange(10**6)}",
        lambda: f"Processed {rng.randrange(10**4)} rows in {rng.random():.3f}s ({word})",
        lambda: f"image sha256:{hashlib.sha256(rng.randbytes(4)).hexdigest()[:12]} {word}",
    ]
    return rng.choice(shapes)()

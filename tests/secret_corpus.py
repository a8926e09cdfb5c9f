"""A corpus of realistic secrets (generated, never real) and of ordinary texts.

``SECRETS``: (family, text, secrets) triples, each text a line a system really prints
(a log line, an exception message, a repr, a command line) holding credentials in their
real formats; ``secrets`` are the substrings that must never leave the control plane.
``ORDINARY``: texts that hold no secret (paths, URLs without credentials, hashes, UUIDs,
base64 media ids, prose); scrubbing should leave them unchanged.

Deterministic (seeded), so a failure names the same sample every run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FAMILIES", "ORDINARY", "SECRETS", "Sample"]

_rng = random.Random(16)
_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"
_HEX = "0123456789abcdef"


#: Samples added after the first corpus draw from their own generators (``_rng`` swapped for
#: the block, then restored), so the samples before them and ``ORDINARY`` stay as they were.
_rng_main = _rng


def _pick(chars: str, n: int) -> str:
    return "".join(_rng.choice(chars) for _ in range(n))


def _mixed(chars: str, n: int) -> str:
    """``n`` characters of ``chars`` with at least one capital, small letter and digit."""
    while True:
        out = _pick(chars, n)
        kinds = (str.isupper, str.islower, str.isdigit)
        if all(any(kind(c) for c in out) for kind in kinds):
            return out


def _password(specials: str = "") -> str:
    core = _mixed(_ALNUM, 10)
    if specials:
        cut = _rng.randrange(2, 8)
        core = core[:cut] + specials + core[cut:]
    return core


@dataclass(frozen=True)
class Sample:
    family: str
    text: str
    secrets: tuple[str, ...]


SECRETS: list[Sample] = []


def _add(family: str, text: str, *secrets: str) -> None:
    SECRETS.append(Sample(family, text, tuple(secrets)))


def _generated_families() -> dict[str, Callable[[random.Random], tuple[str, str]]]:
    from scrub_families import FAMILIES as generated

    return dict(generated)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt() -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(
        json.dumps({"sub": _pick(string.digits, 10), "name": "svc", "iat": 1700000000}).encode()
    )
    return f"{header}.{payload}.{_pick(_URLSAFE, 43)}"


def _pem(label: str, lines: int = 12) -> str:
    body = "\n".join(_pick(_B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


# -- cloud keys ---------------------------------------------------------------------------

for _ in range(4):
    akid = "AKIA" + _pick(string.ascii_uppercase + string.digits, 16)
    secret = _mixed(_B64, 40)
    _add("aws", f"aws_access_key_id = {akid}\naws_secret_access_key = {secret}", akid, secret)
    _add("aws", f"export AWS_SECRET_ACCESS_KEY={secret}", secret)
    _add("aws", f'{{"AccessKeyId": "{akid}", "SecretAccessKey": "{secret}"}}', akid, secret)
    _add("aws", f"botocore: credentials {akid} {secret} were rejected", akid, secret)
for _ in range(2):
    asia = "ASIA" + _pick(string.ascii_uppercase + string.digits, 16)
    session = _pick(_B64, 180)
    _add("aws", f"AWS_SESSION_TOKEN={session} key={asia}", session, asia)

for _ in range(3):
    account_key = _mixed(_B64, 86) + "=="
    _add(
        "azure",
        "DefaultEndpointsProtocol=https;AccountName=media01;"
        f"AccountKey={account_key};EndpointSuffix=core.windows.net",
        account_key,
    )
    _add("azure", f"azure.core.exceptions: storage key {account_key} is not valid", account_key)
    sig = base64.b64encode(_rng.randbytes(32)).decode()
    quoted = sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    _add(
        "azure",
        "GET https://media01.blob.core.windows.net/videos/a.mp4?sv=2022-11-02&ss=b&srt=o"
        f"&sp=r&se=2026-01-01T00:00:00Z&spr=https&sig={quoted} returned 403",
        quoted,
    )
    sas_key = base64.b64encode(_rng.randbytes(32)).decode()
    _add(
        "azure",
        "Endpoint=sb://bus01.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={sas_key}",
        sas_key,
    )

for _ in range(3):
    key_id = _pick(_HEX, 40)
    pem = _pem("PRIVATE KEY", 16)
    doc = {
        "type": "service_account",
        "project_id": "media-prod",
        "private_key_id": key_id,
        "private_key": pem + "\n",
        "client_email": "svc@media-prod.iam.gserviceaccount.com",
        "client_id": _pick(string.digits, 21),
    }
    body_line = pem.splitlines()[3]
    _add("gcp", json.dumps(doc), key_id, body_line)
    _add("gcp", f"could not parse service account info: {doc!r}", key_id, body_line)
    api_key = "AIza" + _pick(_URLSAFE, 35)
    _add("gcp", f"https://maps.googleapis.com/maps/api/geocode/json?key={api_key}", api_key)

# -- connection strings and URLs -------------------------------------------------------------

for specials in ("/", "#", "@", "%40", "%2F%23", "p@/#"):
    pw = _password(specials)
    _add("url", f"could not connect to postgres://app:{pw}@db.internal:5432/media", pw)
    _add("url", f"mysql://root:{pw}@10.0.0.7/app?charset=utf8 refused", pw)
for _ in range(3):
    pw = _password("@")
    _add(
        "url", f"mongodb+srv://svc:{pw}@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority", pw
    )
    pw = _password()
    _add("url", f"Error 111 connecting to redis://:{pw}@cache:6379/0", pw)
    pw = _password("#")
    _add("url", f"amqp://guest:{pw}@rabbit:5672/%2F", pw)
    pw = _password("/")
    _add("url", f"Server=tcp:sql01,1433;Database=app;User Id=sa;Password={pw};Encrypt=true", pw)
    pw = _password()
    _add("url", f"jdbc:postgresql://db/app?user=app&password={pw}&ssl=true", pw)
    tok = "ghp_" + _pick(_ALNUM, 36)
    _add("url", f"fatal: unable to access 'https://{tok}@github.com/org/repo.git/'", tok)
    pw = _password()
    _add("url", f"git clone https://deploy:{pw}@gitlab.example.invalid/group/p.git failed", pw)

# -- Bearer and Basic -------------------------------------------------------------------------

for n in (8, 12, 20, 32, 64, 120):
    tok = _mixed(_URLSAFE, n)
    _add("bearer", f"401 Unauthorized (Authorization: Bearer {tok})", tok)
    _add("bearer", f"headers={{'Authorization': 'Bearer {tok}', 'Accept': '*/*'}}", tok)
for _ in range(3):
    tok = _mixed(_ALNUM, 6)
    _add("bearer", f"request failed: Bearer {tok} rejected by upstream", tok)
    basic = base64.b64encode(f"user:{_password()}".encode()).decode()
    _add("bearer", f"b'GET / HTTP/1.1\\r\\nAuthorization: Basic {basic}\\r\\nHost: x\\r\\n'", basic)
    tok = _mixed(_ALNUM, 24)
    _add("bearer", f"(b'authorization', b'Bearer {tok}')", tok)
    _add("bearer", f"header block: 'Authorization\\nBearer {tok}'", tok)
    _add("bearer", f'{{\\"authorization\\": \\"Bearer {tok}\\"}}', tok)
    cookie = _pick(_ALNUM, 32)
    _add("bearer", f"Set-Cookie: session={cookie}; Path=/; HttpOnly", cookie)

# -- environment-style assignments -----------------------------------------------------------

for name in (
    "PGPASSWORD",
    "MYSQL_PWD",
    "DB_PASSWORD",
    "POSTGRES_PASSWORD",
    "STRIPE_SECRET",
    "CLIENT_SECRET",
    "GITHUB_TOKEN",
    "SLACK_BOT_TOKEN",
    "OPENAI_API_KEY",
    "SENTRY_API_KEY",
    "ENCRYPTION_KEY",
    "REDIS_PASSWORD",
):
    value = _password()
    _add("env", f"{name}={value}", value)
    value = _password()
    _add("env", f'export {name}="{value}"', value)

# Unquoted values holding delimiters: an assignment's value runs to whitespace or a quote.
_rng = random.Random(1603)
for name, specials in (
    ("DB_PASSWORD", "&"),
    ("PGPASSWORD", ";"),
    ("MYSQL_PWD", ","),
    ("REDIS_PASSWORD", ")"),
    ("API_TOKEN", "|"),
    ("CLIENT_SECRET", "}"),
    ("SMTP_PASSWORD", "]>"),
    ("LDAP_BIND_PASSWORD", "&&"),
):
    value = _password(specials)
    _add("env", f"{name}={value}", value, value[value.index(specials[0]) :])
value = "&" + _password()
_add("env", f"password={value}", value[1:])
value = _password(";")
_add("env", f"export REDIS_PASSWORD={value}; redis-server --port 6380", value, value.split(";")[1])
value = _password("&")
_add("env", f"docker: invalid env ['-e', 'POSTGRES_PASSWORD={value}']", value.split("&")[1])
value = _password()
_add("env", f"GET /login?user=bob&password={value}&next=/home -> 500", value)
_rng = _rng_main

# -- quoted and escaped values -------------------------------------------------------------

for _ in range(3):
    pw = _password()
    _add("quoted", f"password='{pw}'", pw)
    pw = _password('\\"')
    _add("quoted", json.dumps({"user": "app", "password": pw}), json.dumps(pw)[1:-1])
    inner = json.dumps({"password": _password()})
    pw = json.loads(inner)["password"]
    _add("quoted", f"validator: {json.dumps(inner)} is not valid", pw)
    pw = _password()
    _add("quoted", f"{{\\u0070assword: {pw}}}", pw)
    pw = _password()
    _add("quoted", f'"\\u0070assword": "{pw}"', pw)
    pw = _password()
    _add("quoted", f"POST body: user=app&password%3D{pw}%26next", pw)
    pw = _password()
    _add("quoted", f"{{'username': 'app', 'password': b'{pw}'}}", pw)
    pw = _password(" ")
    _add("quoted", f'config: {{"db": {{"password": "{pw}"}}}}', pw)

# -- command-line credentials ----------------------------------------------------------------

for _ in range(3):
    pw = _password()
    _add("cli", f"Command '['curl', '-sS', '-u', 'admin:{pw}', 'https://x']' returned 22", pw)
    pw = _password()
    _add("cli", f"curl -u deploy:{pw} https://registry.invalid/v2/", pw)
    pw = _password()
    _add("cli", f"pg_dump --host db --password {pw} app timed out after 30 seconds", pw)
    pw = _password()
    _add("cli", f"Command '['mysql', '-uroot', '-p{pw}', 'app']' timed out after 5 seconds", pw)
    pw = _password()
    _add("cli", f"mysql -h db -u app -p{pw} -e 'select 1' exited 1", pw)
    pw = _password()
    _add("cli", f"sshpass -p {pw} ssh deploy@host uptime: Permission denied", pw)
    pw = _password("!")
    _add("cli", f"docker login -u bot -p{pw} registry.invalid", pw)
    pw = _password()
    _add("cli", f"redis-cli -h cache -a {pw} ping: NOAUTH", pw)
    pw = _password()
    _add("cli", f"vault login --token={pw}", pw)

# Tools that take a password on their command line, each its own way.
_rng = random.Random(1604)
for _ in range(2):
    pw = _password()
    _add("cli", f"openssl pkcs12 -in media.p12 -passin pass:{pw} -nodes: mac verify failure", pw)
    pw = _password("!")
    _add("cli", f"Command '['openssl', 'genrsa', '-passout', 'pass:{pw}', '2048']' failed", pw)
    pw = _password()
    _add("cli", f"docker login -u ci -p {pw} registry.invalid: unauthorized", pw)
    pw = _password()
    _add("cli", f"podman login --username ci -p {pw} quay.invalid exited 125", pw)
    pw, pw2 = _password(), _password()
    _add(
        "cli",
        f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {pw} -deststorepass {pw2}",
        pw,
        pw2,
    )
    pw = _password()
    _add("cli", f"keytool -genkeypair -alias media -keypass {pw} -storepass {pw}", pw)
    pw = _password()
    _add("cli", f"plink -ssh deploy@host -pw {pw} uptime: Access denied", pw)
    pw = _password()
    _add("cli", f"smbclient //nas/media -U backup%{pw} -c ls: NT_STATUS_LOGON_FAILURE", pw)
    pw = _password()
    _add("cli", f"xfreerdp /v:win01 /u:admin /p:{pw} /cert:ignore exited 131", pw)
    pw = _password()
    _add("cli", f"ERROR 1396: CREATE USER 'app'@'%' IDENTIFIED BY '{pw}'", pw)
    pw = _password()
    _add("cli", f"syntax error at or near \"WITH\": ALTER ROLE app WITH PASSWORD '{pw}'", pw)
_rng = _rng_main

# -- vendor token formats --------------------------------------------------------------------

for _ in range(2):
    for prefix in ("sk_live_", "rk_live_", "sk_test_"):
        tok = prefix + _pick(_ALNUM, 24)
        _add("vendor", f"stripe.error.AuthenticationError: Invalid API Key provided: {tok}", tok)
    for prefix in ("ghp_", "gho_", "ghs_"):
        tok = prefix + _pick(_ALNUM, 36)
        _add("vendor", f"Bad credentials for token {tok}", tok)
    tok = "github_pat_" + _pick(_ALNUM, 22) + "_" + _pick(_ALNUM, 59)
    _add("vendor", f"gh: {tok} expired", tok)
    tok = "glpat-" + _pick(_URLSAFE, 20)
    _add("vendor", f"401 from gitlab with {tok}", tok)
    tok = "npm_" + _pick(_ALNUM, 36)
    _add("vendor", f"//registry.npmjs.org/:_authToken={tok}", tok)
    _add("vendor", f"npm ERR! token {tok} revoked", tok)
    tok = "hf_" + _pick(string.ascii_letters, 34)
    _add("vendor", f"huggingface_hub: invalid user token {tok}", tok)
    tok = "SG." + _pick(_URLSAFE, 22) + "." + _pick(_URLSAFE, 43)
    _add("vendor", f"sendgrid rejected key {tok}", tok)
    for prefix in ("xoxb-", "xoxp-"):
        digits = "-".join(_pick(string.digits, 12) for _ in range(2))
        tok = f"{prefix}{digits}-{_pick(_ALNUM, 24)}"
        _add("vendor", f"slack_sdk: invalid_auth for {tok}", tok)
    hook = f"T{_pick(_ALNUM.upper(), 8)}/B{_pick(_ALNUM.upper(), 8)}/{_pick(_ALNUM, 24)}"
    _add(
        "vendor",
        f"POST https://hooks.slack.com/services/{hook} failed",
        hook.rsplit("/", maxsplit=1)[-1],
    )
    tok = "sk-proj-" + _pick(_URLSAFE, 48)
    _add("vendor", f"openai.AuthenticationError: Incorrect API key provided: {tok}", tok)
    tok = "sk-" + _pick(_ALNUM, 48)
    _add("vendor", f"api key {tok}", tok)
    tok = "sk-ant-api03-" + _pick(_URLSAFE, 93) + "AA"
    _add("vendor", f"anthropic: x-api-key header is invalid ({tok})", tok)

_rng = random.Random(1601)
for _ in range(2):
    # Telegram bot tokens, alone and in the Bot API's URLs (httpx and requests print them).
    tok = f"{_pick(string.digits, 9)}:AA{_pick(_URLSAFE, 33)}"
    _add("vendor", f"telegram: Unauthorized for bot token {tok}", tok)
    _add(
        "vendor",
        f"httpx.HTTPStatusError: Client error '401 Unauthorized' for url "
        f"'https://api.telegram.org/bot{tok}/getMe'",
        tok.split(":")[1],
    )
    _add("vendor", f"GET https://api.telegram.org/bot{tok}/sendMessage?chat_id=42 -> 404", tok)

_rng = random.Random(1605)
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
for _ in range(2):
    tok = "hvs." + _pick(_URLSAFE, 91)
    _add("vendor", f"vault: permission denied (token {tok})", tok)
    tok = "hvb." + _pick(_URLSAFE, 24)
    _add("vendor", f"X-Vault-Token: {tok} is expired", tok)
    tok = "GOCSPX-" + _pick(_URLSAFE, 28)
    _add("vendor", f"google.auth: invalid_client for client secret {tok}", tok)
    tok = "ya29.a0" + _pick(_URLSAFE, 120)
    _add("vendor", f"googleapiclient: 401 for access token {tok}", tok)
    tok = "dapi" + _pick(_HEX, 32)
    _add("vendor", f"databricks-cli: Invalid access token {tok}", tok)
    tok = "ATATT3xFfGF0" + _pick(_URLSAFE, 170) + "=" + _pick(_HEX.upper(), 8)
    _add("vendor", f"jira: 401 for api token {tok}", tok)
    tok = "AGE-SECRET-KEY-1" + _pick(_BECH32, 58)
    _add("vendor", f"age: could not parse identity {tok}", tok)
    tok = "EAAA" + _pick(_URLSAFE, 60)
    _add("vendor", f"square.ApiError: UNAUTHORIZED with access token {tok}", tok)
    tok = f"{_pick(_HEX, 32)}-us{_rng.randrange(1, 22)}"
    _add("vendor", f"mailchimp_marketing: API key {tok} is invalid", tok)
    tok = _pick(_ALNUM, 3) + _pick(string.digits, 1) + "Q~" + _pick(_ALNUM + "_~.-", 34)
    _add("vendor", f"AADSTS7000215: Invalid client secret provided ({tok})", tok)
_rng = _rng_main

# Config files' own words: pw=, npm's _auth, Docker's "auth", kubeconfig, .netrc.
_rng = random.Random(1606)
for _ in range(2):
    pw = _password()
    _add("config", f"GET /cgi-bin/login?user=admin&pw={pw} -> 401", pw)
    pw = _password()
    _add("config", f"router: bad credentials (user=admin pw={pw})", pw)
    auth = base64.b64encode(f"ci:{_password()}".encode()).decode()
    _add("config", f".npmrc: //registry.invalid/:_auth={auth} rejected", auth)
    _add("config", json.dumps({"auths": {"registry.invalid": {"auth": auth}}}), auth)
    tok = _mixed(_URLSAFE, 40)
    _add("config", f"npm ERR! //npm.pkg.invalid/:_authToken={tok}", tok)
    key = base64.b64encode(_pem("RSA PRIVATE KEY", 3).encode()).decode()
    _add("config", f"kubeconfig:\n    client-key-data: {key}\n", key)
    tok = _mixed(_ALNUM, 32)
    _add("config", f"users:\n- name: ci\n  user:\n    token: {tok}\n", tok)
    pw = _password()
    _add("config", f"netrc: machine api.invalid login ci password {pw}", pw)
    pw = _password()
    _add("config", f"machine git.invalid\n  login deploy\n  password {pw}\n", pw)
_rng = _rng_main

# -- XML and HTML -----------------------------------------------------------------------------

_rng = random.Random(1602)

for _ in range(2):
    pw = _password("&amp;")
    _add(
        "xml", f"maven: <server><id>nexus</id><username>ci</username><password>{pw}</password>", pw
    )
    pw = _password()
    _add("xml", f"SOAP fault for <Login><User>app</User><Password>{pw}</Password></Login>", pw)
    secret = _mixed(_URLSAFE, 34)
    _add("xml", f"<ClientId>svc</ClientId><ClientSecret>{secret}</ClientSecret>", secret)
    akid, key = "ASIA" + _pick(string.ascii_uppercase + string.digits, 16), _mixed(_B64, 40)
    session = _pick(_B64, 120)
    _add(
        "xml",
        f"<Credentials><AccessKeyId>{akid}</AccessKeyId><SecretAccessKey>{key}"
        f"</SecretAccessKey><SessionToken>{session}</SessionToken></Credentials>",
        akid,
        key,
        session,
    )
    key = _mixed(_ALNUM, 24)
    _add("xml", f"<ns2:AccessKey xmlns:ns2='urn:x'>{key}</ns2:AccessKey>", key)
    pw = _password("&")
    _add("xml", f'Web.config: <add key="DbPassword" value="{pw}" /> is invalid', pw)
    pw = _password()
    _add("xml", f'<add key=\\"StorageAccountKey\\" value=\\"{pw}\\"/>', pw)
    pw = _password()
    _add("xml", f'form: <input type="password" name="password" id="pw" value="{pw}">', pw)

_rng = _rng_main

# -- private keys -----------------------------------------------------------------------------

for label in (
    "RSA PRIVATE KEY",
    "PRIVATE KEY",
    "EC PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "DSA PRIVATE KEY",
):
    pem = _pem(label, 10)
    line = pem.splitlines()[2]
    _add("private_key", f"ssh: could not load key:\n{pem}\n", line)
    _add("private_key", "key=" + json.dumps(pem), line)
pem = _pem("OPENSSH PRIVATE KEY", 20)
cut = pem[: len(pem) // 2]
_add("private_key", f"truncated dump: {cut}", cut.splitlines()[3])

# -- JWTs -----------------------------------------------------------------------------------

for _ in range(4):
    tok = _jwt()
    _add("jwt", f"token rejected: {tok}", tok.split(".")[2])
    _add("jwt", f"id_token={tok}&state=abc", tok.split(".")[2])

# Oracle's user/password@ (SQL*Plus and the Oracle tools' connect strings, the thin JDBC URL).
_rng = random.Random(1607)
for _ in range(2):
    pw = _password()
    _add("oracle", f"sqlplus scott/{pw}@//db.invalid:1521/ORCL failed: ORA-01017", pw)
    pw = _password("#")
    _add("oracle", f"Command '['sqlplus', '-s', 'app/{pw}@db.invalid/MEDIA']' returned 1", pw)
    pw = _password()
    _add("oracle", f"jdbc:oracle:thin:app/{pw}@db.invalid:1521:MEDIA refused", pw)
    pw = _password()
    _add("oracle", f"url=jdbc:oracle:thin:app/{pw}@//db.invalid:1521/media", pw)
    pw = _password()
    _add("oracle", f"sqlldr userid=app/{pw} control=load.ctl log=load.log exited 1", pw)
    pw = _password()
    _add("oracle", f"expdp system/{pw}@ORCL schemas=app directory=dp", pw)
_rng = _rng_main

# URLs' credentials without a scheme after a proxy's name, JSON-escaped, percent-encoded.
_rng = random.Random(1608)
for _ in range(2):
    pw = _password()
    _add("url", f"proxy: bob:{pw}@proxy.corp.invalid:8080 refused the tunnel", pw)
    pw = _password("@")
    _add("url", f"HTTPS_PROXY=ci:{pw}@proxy.invalid:3128 pip install media", pw)
    pw = _password()
    _add("url", f"pip --proxy ci:{pw}@proxy.invalid:3128 install media: 407", pw)
    pw = _password()
    _add("url", json.dumps({"proxy": f"ci:{pw}@proxy.invalid:3128"}), pw)
    pw = _password()
    _add("url", json.dumps({"url": f"https://bob:{pw}@api.invalid/v1"}).replace("/", "\\/"), pw)
    pw = _password()
    _add("url", f'"remote":"git+https:\\/\\/ci:{pw}@git.invalid\\/r.git"', pw)
    pw = _password()
    _add("url", f"GET /cb?redirect=https%3A%2F%2Fbob%3A{pw}%40api.invalid%2F -> 302", pw)
    pw = _password()
    _add("url", f"next=https%3a%2f%2fci%3a{pw}%2540x%40git.invalid%2fr&state=1", pw, "%2540x")
    tok = "ghp_" + _pick(_ALNUM, 36)
    _add("url", f"return_to=https%3A%2F%2F{tok[4:]}%40github.invalid%2Forg", tok[4:])
_rng = _rng_main

# YAML block scalars under a secret's key (password: |, >-, |-), one line or several.
_rng = random.Random(1609)
for _ in range(2):
    pw = _password()
    _add("config", f"password: |\n  {pw}\n", pw)
    pw = _password()
    _add("config", f"db:\n  password: >-\n    {pw}\n  user: app\n", pw)
    pw = _password()
    _add("config", f"client_secret: |-\n  {pw}\n  {pw[::-1]}\n", pw, pw[::-1])
    pw = _password()
    _add("config", f"config: 'api_token: |\\n  {pw}\\nuser: app'", pw)
_rng = _rng_main

# Short keys: pass= as a word, key= / auth= / pass= as a URL's query parameter, X-Auth.
_rng = random.Random(1610)
for _ in range(2):
    pw = _password()
    _add("config", f"ftp: login user=bob pass={pw} failed", pw)
    pw = _password()
    _add("config", f"POST /login?user=bob&pass={pw}&next=/ -> 401", pw)
    key = _mixed(_URLSAFE, 39)
    _add("config", f"GET https://maps.invalid/api/js?key={key}&callback=init -> 403", key)
    tok = _mixed(_URLSAFE, 40)
    _add("config", f"https://app.firebaseio.invalid/users.json?auth={tok} -> 401", tok)
    tok = _mixed(_ALNUM, 24)
    _add("bearer", f"curl -H 'X-Auth: {tok}' https://api.invalid/v1 -> 401", tok)
_rng = _rng_main

# Discord bot tokens (base64 of the bot's numeric id, a timestamp, an HMAC), Doppler tokens,
# a Twilio auth token named as such.
_rng = random.Random(1611)
for _ in range(2):
    user_id = str(_rng.randrange(10**16, 10**19))
    tok = f"{_b64url(user_id.encode())}.{_pick(_URLSAFE, 6)}.{_pick(_URLSAFE, 38)}"
    _add("vendor", f"discord.errors.LoginFailure: Improper token has been passed: {tok}", tok)
    tok = f"{_b64url(user_id.encode())}.{_pick(_URLSAFE, 6)}.{_pick(_URLSAFE, 27)}"
    _add("vendor", f"DISCORD_BOT={tok!r}", tok)
    tok = "dp.st.prd." + _pick(_ALNUM, 43)
    _add("vendor", f"doppler: Invalid Service token {tok}", tok)
    tok = "dp.pt." + _pick(_ALNUM, 43)
    _add("vendor", f"doppler.errors: 401 for {tok}", tok)
    tok = _pick(_HEX, 32)
    _add("vendor", f"twilio auth {tok} rejected (20003)", tok)
_rng = _rng_main

# PuTTY's .ppk private lines; DER private keys without their BEGIN line (one line, or in a
# percent-encoded PEM).
_rng = random.Random(1612)
for _ in range(2):
    lines = [_pick(_B64, 64) for _ in range(3)] + [_pick(_B64, 20) + "=="]
    ppk = (
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy\n"
        f"Public-Lines: 2\n{_pick(_B64, 64)}\n{_pick(_B64, 20)}\n"
        "Private-Lines: 4\n" + "\n".join(lines) + f"\nPrivate-MAC: {_pick(_HEX, 64)}\n"
    )
    _add("private_key", f"pageant: could not load key:\n{ppk}", *lines)
    _add("private_key", "key=" + json.dumps(ppk), *lines)
    der = "MIIEowIBAAKCAQEA" + _pick(_B64, 84)
    _add("private_key", f"{der}\n", der[16:])
    der = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + _pick(_B64, 60)
    body = der.replace("+", "%2B").replace("/", "%2F")
    tail = _pick(_ALNUM, 64)
    _add("private_key", f"key=-----BEGIN%20PRIVATE%20KEY-----%0A{body}%0A{tail}", body[32:], tail)
    der = "MHcCAQEEI" + _pick(_B64, 55)
    _add("private_key", f"ecdsa: bad key {der}", der[9:])
_rng = _rng_main

# Cookies in a dict (requests' cookies=), in a cookie jar's repr, session cookies by name.
_rng = random.Random(1613)
for _ in range(2):
    v = _mixed(_ALNUM, 32)
    _add("bearer", f"requests.get(url, cookies={{'_gitlab_session': '{v}'}}) -> 302", v)
    v, v2 = _mixed(_ALNUM, 32), _mixed(_ALNUM, 32)
    _add("bearer", json.dumps({"cookies": {"sid": v, "csrftoken": v2}}), v, v2)
    v = _mixed(_ALNUM, 32)
    _add("bearer", f"<RequestsCookieJar[<Cookie sid={v} for .app.invalid/>]>", v)
    v = "s%3A" + _mixed(_URLSAFE, 32) + "." + _pick(_ALNUM, 27)
    _add("bearer", f"express: connect.sid={v}; Path=/ rejected", v)
    v = _pick(string.ascii_lowercase + string.digits, 26)
    _add("bearer", f"PHPSESSID={v} expired", v)
_rng = _rng_main

# A password after a spaced -p (any tool; only a value shaped like a password), htpasswd -b.
_rng = random.Random(1614)
for _ in range(2):
    pw = _password()
    _add("cli", f"backup-tool --user bob -p {pw} --host db.invalid exited 1", pw)
    pw = _password()
    _add("cli", f"Command '['sync-cli', '-p', '{pw}', 'push']' returned 3", pw)
    pw = _password()
    _add("cli", f"htpasswd -bc /etc/nginx/.htpasswd admin {pw}: permission denied", pw)
_rng = _rng_main

# A quote inside an unquoted value (password=Xk9v'Q2m), Doppler tokens of other lengths.
_rng = random.Random(1616)
for _ in range(2):
    pw = _password("'")
    _add("env", f"password={pw} rejected", pw[pw.index("'") :])
    pw = _password('"')
    _add("env", f"export DB_PASSWORD={pw}; ./run", pw[pw.index('"') :])
    tok = "dp.st.dev." + _pick(_ALNUM, 36)
    _add("vendor", f"doppler: token {tok} revoked", tok)
_rng = _rng_main

# Password hashes in crypt(3) form: a shadow line, bcrypt in a row's repr, yescrypt.
_rng = random.Random(1617)
_CRYPT = string.ascii_letters + string.digits + "./"
for _ in range(2):
    h = f"$6${_pick(_CRYPT, 16)}${_pick(_CRYPT, 86)}"
    _add("hash", f"shadow: bob:{h}:19000:0:99999:7:::", h)
    h = f"$2b$12${_pick(_CRYPT, 53)}"
    _add("hash", f"IntegrityError: row {{'user': 'bob', 'hash': '{h}'}}", h)
    h = f"$y$j9T${_pick(_CRYPT, 22)}${_pick(_CRYPT, 43)}"
    _add("hash", f"chpasswd -e: bob:{h}", h)
    h = f"$1${_pick(_CRYPT, 8)}${_pick(_CRYPT, 22)}"
    _add("hash", f"htpasswd line admin:{h} rejected", h)
_rng = _rng_main

# The same formats once more inside a JSON string (a message quoting a message), and
# "twilio" repeated on one line (a rejection's message repeats the input).
_rng = random.Random(1618)
pw = _password()
_add(
    "url",
    json.dumps(json.dumps({"url": f"https://ci:{pw}@api.invalid/v1"}).replace("/", "\\/")),
    pw,
)
tok = _pick(_HEX, 32)
_add("vendor", "invalid input for twilio auth x: " * 4 + f"twilio auth {tok} rejected", tok)
_rng = _rng_main
_rng = random.Random(1619)
pw = _password()
_add("config", repr(f"config: 'api_token: |\\n  {pw}\\n  {pw[::-1]}\\nuser: app'"), pw, pw[::-1])
_rng = _rng_main

# One generated sample of each family of tests/scrub_families.py (gitleaks' and
# detect-secrets' families), so every channel test carries them too.
_families_rng = random.Random(3535)
for _name, _gen in _generated_families().items():
    _text, _secret = _gen(_families_rng)
    _add(f"gen_{_name}", _text, _secret)

FAMILIES = sorted({s.family for s in SECRETS})

# -- ordinary texts ------------------------------------------------------------------------

ORDINARY: list[str] = []
for _ in range(10):
    ORDINARY.append(f"/var/lib/media/{uuid.uuid4()}/frame_{_rng.randrange(10**5):05d}.png")
    ORDINARY.append(f"sha256:{hashlib.sha256(_rng.randbytes(16)).hexdigest()}")
    ORDINARY.append(f"commit {hashlib.sha1(_rng.randbytes(16)).hexdigest()} not found")
    ORDINARY.append(f"request {uuid.uuid4()} finished in 12 ms")
    ORDINARY.append(f"media id {_b64url(_rng.randbytes(16))} is not ready")
    ORDINARY.append(f"https://cdn.example.invalid/v/{_pick(_ALNUM, 11)}?t=42&quality=hd")
    # 40-character media ids: the shape of an AWS secret key alone (the rule for it
    # redacts those that mix capitals, small letters and digits: counted as false positives).
    ORDINARY.append(f"thumbnail {_b64url(_rng.randbytes(30))} generated")
    ORDINARY.append(f"md5 {hashlib.md5(_rng.randbytes(8)).hexdigest()} mismatch")
ORDINARY += [
    "/usr/lib/python3.11/site-packages/httpx/_transports/default.py",
    "C:\\Users\\build\\AppData\\Local\\Temp\\pip-req-build-1x2y3z",
    "https://github.com/org/repo/pull/1234#issuecomment-99887766",
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "https://registry.npmjs.org/@babel/core/-/core-7.24.0.tgz",
    "https://host.invalid:8443/api/v1/items?page=2&per_page=50",
    "Connection refused: connect to 10.0.0.7:5432 failed",
    "the authorization failed for user bob",
    "a basic example of a bearer token flow",
    "token expired, please log in again",
    "the password is too short (minimum 12 characters)",
    "missing api key: set it in the settings page",
    "secret rotation scheduled for tomorrow",
    "mkdir -p /tmp/build && make -j4",
    "docker run -p 8080:80 nginx",
    "gcc -pthread -O2 -o app main.c",
    "ffprobe -v error -show_entries format=duration -of csv=p=0 in.mp4",
    "validation failed: 3 pass, 1 warn, 2 fail",
    "stream 0: h264 (High), yuv420p, 1920x1080, 30 fps",
    "HTTP/1.1 503 Service Unavailable; Retry-After: 30",
    "x-request-id: 6f1c2a9e-3b1d-4f57-9c0a-8e2d1f3b4a5c",
    "container image sha256:9b2c7f3d1a4e5f60718293a4b5c6d7e8f9012345",
    "2026-11-23T06:13:20.123Z INFO worker started (pid=4242)",
    'ETag: W/"5e-1a2b3c4d5e6f7a8b"',
    'Traceback (most recent call last):\n  File "/app/main.py", line 3, in <module>',
    "Content-Type: application/json; charset=utf-8",
    "keyboard interrupt received, shutting down",
    "duration must be >= 0 (got -1)",
    "the tokenizer produced 512 tokens",
    "user-agent: python-httpx/0.27.0",
    "dQw4w9WgXcQ is a video id",
    "sk-learn is not a package; use scikit-learn",
    "AKIA is the prefix of an access key id",
    "https://api.telegram.org/bot/getMe returned 404 (no token configured)",
    "chatbot 123456789: AAA battery low",
    "NoSuchKey: <Key>media/2026/11/frame_00042.png</Key><MaxKeys>1000</MaxKeys>",
    '<label for="password">Password</label><input type="password" name="password" value="">',
    "<PasswordLastUsed>2026-01-01T00:00:00Z</PasswordLastUsed><TokenType>Bearer</TokenType>",
    '<add key="PageSize" value="50" /><Password/>',
    "GET /login?password=&user=bob&next=/home -> 400 (empty password)",
    "https://host.invalid/account?password_reset=1&user=bob&step=2",
    "ssh -p 2222 deploy@host uptime; psql -h db -p 5432 -U app -d media",
    "openssl pkcs12 -in a.p12 -passin env:P12_PASS -passout file:/run/pw.txt -nodes",
    "docker login -u ci --password-stdin registry.invalid && docker run -p 8443:443 app",
    "ALTER ROLE app PASSWORD NULL; sort -u %s",
    "cache key 9e107d9d372bb6826bd81d3542a419d6-us-east-1 expired; dapi endpoint /api/2.0",
    "ya29 and hvs are token prefixes; see ~/.config/app~1Q~notes.txt",
    '{"auth": "required", "credsStore": "desktop"}; spw=1 npw: 2 cwd=/x',
    "login failed for bob: password expired, try login again",
]

# Near misses of the formats of issue 30: they hold no secret.
ORDINARY += [
    "uses: actions/checkout@v4 and actions/setup-python@v5",
    "the demo schema scott/tiger@orcl is the classic Oracle example",
    "cp build/media@2x.png dist/img/media@2x.png; chown app:app dist",
    "mail bob.smith@example.invalid, cc alice@example.invalid at 10:30",
    "INFO:root:bob@example.invalid logged in at 2026-11-23 06:13:20",
    "proxy: http://proxy.corp.invalid:8080 (no credentials)",
    "HTTPS_PROXY=proxy.corp.invalid:8080 NO_PROXY=localhost,127.0.0.1",
    "ProxyError('Unable to connect to proxy', OSError('407 Proxy Authentication Required'))",
    "sqlplus /nolog @deploy.sql; sqlplus -s / as sysdba; sqlplus app@MEDIA",
    "jdbc:oracle:thin:@db.invalid:1521:MEDIA is unreachable",
    "sorted(items, key=lambda item: item[1]); max(d, key=d.get)",
    "GET /search?q=cats&key=&page=2 -> 200",
    "GET /files?key=media/2026/11/frame_00042.png -> 404",
    "https://app.invalid/?auth=none&mode=dark",
    "summary: pass=3 fail=0 skip=1",
    "description: |\n  A tool for media processing\n  with two lines\n",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMx\n",
    "pytest -p no:cacheprovider -p xdist; git add -p src/main.py; ssh -p 2222 host",
    "docker run -p 127.0.0.1:8080:80 -p 9443:443 app",
    "Mzg1ZjQ2YWI3ZGVhNGQ1ZTg5.abcdef.ghijklmnopqrstuvwxyzABCDEFG",
    "twilio: message SM0a1b2c3d4e5f60718293a4b5c6d7e8f9 queued",
    "cookies={} and cookies: 3 stored; <Cookie consent for .app.invalid/>",
    "https:\\/\\/cdn.invalid\\/v1\\/a@2x.png",
    "return_to=https%3A%2F%2Fapp.invalid%2Fhome%40section",
    "Private-Lines: see the PuTTY documentation",
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "echo $1$2 costs $5$ each; PS1='$6$ ' and $y$x",
]

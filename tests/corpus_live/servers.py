"""Real servers on 127.0.0.1, started in a scratch directory and stopped by the stack.

Debian's daemons (``scripts/setup`` installs them): MariaDB, Mosquitto, memcached,
OpenLDAP's slapd, nats-server, RabbitMQ (its management API); Python servers: aiosmtpd, pyftpdlib.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import LOOPBACK, daemon, free_port, require, wait_port
from corpus_live.heldout2._daemons import _rabbit_hash, rabbit_env

# -- MariaDB ------------------------------------------------------------------------------


@dataclass
class MariaDB:
    port: int
    socket: str

    def kw(self, **over: Any) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "host": LOOPBACK,
            "port": self.port,
            "user": "app",
            "password": "app-pw",
            "database": "app",
            "connect_timeout": 5,
        }
        kw.update(over)
        return kw

    def root_sql(self, sql: str) -> None:
        subprocess.run(
            ["mariadb", "--no-defaults", "-uroot", f"--socket={self.socket}", "-e", sql],
            check=True,
            capture_output=True,
        )


_MARIADB_SETUP = """
CREATE DATABASE app;
CREATE DATABASE other;
CREATE TABLE app.t (id INT PRIMARY KEY, name VARCHAR(4)) ENGINE=InnoDB;
INSERT INTO app.t VALUES (1, 'one');
CREATE TABLE app.locked (id INT PRIMARY KEY) ENGINE=InnoDB;
INSERT INTO app.locked VALUES (1);
CREATE TABLE app.secret (x INT);
CREATE TABLE app.parent (id INT PRIMARY KEY) ENGINE=InnoDB;
CREATE TABLE app.child (pid INT, FOREIGN KEY (pid) REFERENCES app.parent(id)) ENGINE=InnoDB;
CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw';
GRANT ALL ON app.* TO 'app'@'%';
CREATE USER 'limited'@'%' IDENTIFIED BY 'limited-pw';
GRANT SELECT ON app.t TO 'limited'@'%';
CREATE USER 'single'@'%' IDENTIFIED BY 'single-pw' WITH MAX_USER_CONNECTIONS 1;
GRANT SELECT ON app.* TO 'single'@'%';
CREATE USER 'locked'@'%' IDENTIFIED BY 'locked-pw' ACCOUNT LOCK;
CREATE USER 'hourly'@'%' IDENTIFIED BY 'hourly-pw' WITH MAX_QUERIES_PER_HOUR 1;
GRANT SELECT ON app.* TO 'hourly'@'%';
CREATE USER 'wide'@'%' IDENTIFIED BY 'wide-pw';
GRANT SELECT ON *.* TO 'wide'@'%';
FLUSH PRIVILEGES;
"""


def mariadb(stack: contextlib.ExitStack, work: Path) -> MariaDB:
    require("mariadbd", "mariadb-install-db", "mariadb")
    data = work / "data"
    for attempt in (1, 2):  # it failed once in a while under load (exit 1): a second try
        done = subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={data}",
                "--user=root",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
            ],
            check=False,
            capture_output=True,
        )
        if done.returncode == 0:
            break
        shutil.rmtree(data, ignore_errors=True)
        if attempt == 2:
            tail = (done.stderr or done.stdout or b"")[-800:].decode("utf-8", "replace")
            raise RuntimeError(f"mariadb-install-db exited {done.returncode}: {tail}")
    port = free_port()
    sock = str(work / "mysqld.sock")
    daemon(
        stack,
        [
            "mariadbd",
            "--no-defaults",
            f"--datadir={data}",
            f"--socket={sock}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            "--user=root",
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=16M",
            "--innodb-log-file-size=8M",
            "--max-connections=30",
            f"--pid-file={work / 'mysqld.pid'}",
            "--skip-log-bin",
        ],
        port,
        log=work / "mariadb.log",
    )
    db = MariaDB(port, sock)
    db.root_sql(_MARIADB_SETUP)
    return db


# -- Mosquitto ----------------------------------------------------------------------------


@dataclass
class Mosquitto:
    port: int  # authenticated listener (user app / app-pw; acl)
    anon_port: int  # anonymous listener


def mosquitto(stack: contextlib.ExitStack, work: Path) -> Mosquitto:
    require("mosquitto", "mosquitto_passwd")
    pw = work / "passwd"
    pw.write_text("")
    subprocess.run(["mosquitto_passwd", "-b", str(pw), "app", "app-pw"], check=True)
    subprocess.run(["mosquitto_passwd", "-b", str(pw), "reader", "reader-pw"], check=True)
    acl = work / "acl"
    acl.write_text(
        "user app\ntopic readwrite app/#\n\nuser reader\ntopic read app/#\n",
    )
    port, anon = free_port(), free_port()
    conf = work / "mosquitto.conf"
    conf.write_text(
        "per_listener_settings true\n"
        "user root\n"
        f"listener {port} 127.0.0.1\n"
        "allow_anonymous false\n"
        f"password_file {pw}\n"
        f"acl_file {acl}\n"
        f"listener {anon} 127.0.0.1\n"
        "allow_anonymous true\n"
        "max_packet_size 2000\n"
        "persistence false\n"
    )
    daemon(stack, ["mosquitto", "-c", str(conf)], port, log=work / "mosquitto.log")
    wait_port(anon)
    return Mosquitto(port, anon)


# -- memcached ----------------------------------------------------------------------------


def memcached(stack: contextlib.ExitStack, work: Path, *extra: str) -> int:
    require("memcached")
    port = free_port()
    daemon(
        stack,
        ["memcached", "-u", "root", "-l", LOOPBACK, "-p", str(port), "-U", "0", "-m", "8", *extra],
        port,
        log=work / f"memcached-{port}.log",
    )
    return port


# -- OpenLDAP slapd -----------------------------------------------------------------------

BASE_DN = "dc=example,dc=org"
ADMIN_DN = f"cn=admin,{BASE_DN}"
ADMIN_PW = "admin-pw"
USER_DN = f"uid=alice,ou=people,{BASE_DN}"
USER_PW = "alice-pw"


@dataclass
class Slapd:
    port: int

    @property
    def url(self) -> str:
        return f"ldap://{LOOPBACK}:{self.port}"


def slapd(stack: contextlib.ExitStack, work: Path) -> Slapd:
    require("slapd", "slapadd", "slappasswd")
    db = work / "db"
    db.mkdir()
    admin_hash = subprocess.run(
        ["slappasswd", "-s", ADMIN_PW], check=True, capture_output=True, text=True
    ).stdout.strip()
    conf = work / "slapd.conf"
    conf.write_text(
        "include /etc/ldap/schema/core.schema\n"
        "include /etc/ldap/schema/cosine.schema\n"
        "include /etc/ldap/schema/inetorgperson.schema\n"
        f"pidfile {work / 'slapd.pid'}\n"
        "modulepath /usr/lib/ldap\n"
        "moduleload back_mdb\n"
        "sizelimit 3\n"
        "database mdb\n"
        "maxsize 10485760\n"
        f'suffix "{BASE_DN}"\n'
        f'rootdn "{ADMIN_DN}"\n'
        f"rootpw {admin_hash}\n"
        f"directory {db}\n"
        "access to attrs=userPassword by self write by anonymous auth by * none\n"
        f'access to dn.subtree="ou=secret,{BASE_DN}" by dn.exact="{ADMIN_DN}" write '
        "by * none\n"
        "access to * by self write by users read by anonymous read\n"
    )
    ldif = work / "base.ldif"
    people = "\n".join(
        f"dn: uid=u{i},ou=people,{BASE_DN}\nobjectClass: inetOrgPerson\ncn: u{i}\nsn: u{i}\n"
        f"uid: u{i}\n"
        for i in range(6)
    )
    ldif.write_text(
        f"dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\no: Example\n"
        "dc: example\n\n"
        f"dn: ou=people,{BASE_DN}\nobjectClass: organizationalUnit\nou: people\n\n"
        f"dn: ou=secret,{BASE_DN}\nobjectClass: organizationalUnit\nou: secret\n\n"
        f"dn: {USER_DN}\nobjectClass: inetOrgPerson\ncn: Alice\nsn: A\nuid: alice\n"
        f"userPassword: {USER_PW}\n\n" + people
    )
    subprocess.run(["slapadd", "-f", str(conf), "-l", str(ldif)], check=True, capture_output=True)
    port = free_port()
    daemon(
        stack,
        ["slapd", "-d", "0", "-f", str(conf), "-h", f"ldap://{LOOPBACK}:{port}/"],
        port,
        log=work / "slapd.log",
    )
    return Slapd(port)


# -- aiosmtpd -----------------------------------------------------------------------------


@dataclass
class Smtp:
    port: int  # AUTH required (user app / app-pw)
    open_port: int  # no AUTH; recipients judged by the handler


def _smtp_handler() -> Any:
    class Handler:
        async def handle_RCPT(
            self, server: Any, session: Any, envelope: Any, address: str, options: Any
        ) -> str:
            local = address.split("@", maxsplit=1)[0]
            replies = {
                "nobody": "550 5.1.1 <nobody@example.org>: Recipient address rejected: "
                "User unknown in local recipient table",
                "full": "452 4.2.2 Mailbox full",
                "greylist": "450 4.2.0 <greylist@example.org>: Recipient address rejected: "
                "Greylisted, see http://postgrey.schweikert.ch/help/example.org.html",
                "relay": "554 5.7.1 <relay@elsewhere.test>: Relay access denied",
                "throttle": "421 4.7.0 Too many messages from this sender, try again later",
                "ratelimit": "450 4.7.1 Rate limit exceeded for this sender, slow down",
                "blocked": "550 5.7.1 Message rejected due to local policy",
                "moved": "551 5.1.6 User has moved; please try <new@example.org>",
            }
            if local in replies:
                return replies[local]
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            if b"TOO-BIG" in envelope.content:
                return "552 5.3.4 Message size exceeds fixed limit"
            if b"SPAM" in envelope.content:
                return "554 5.7.1 Message rejected as spam"
            return "250 Message accepted for delivery"

    return Handler()


def smtp(stack: contextlib.ExitStack, work: Path) -> Smtp:
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            b"app",
            b"app-pw",
        )
        return AuthResult(success=ok, handled=False)

    port, open_port = free_port(), free_port()
    auth = Controller(
        _smtp_handler(),
        hostname=LOOPBACK,
        port=port,
        authenticator=authenticator,
        auth_required=True,
        auth_require_tls=False,
        data_size_limit=4096,
    )
    plain = Controller(_smtp_handler(), hostname=LOOPBACK, port=open_port, data_size_limit=4096)
    for c in (auth, plain):
        c.start()
        stack.callback(c.stop)
    return Smtp(port, open_port)


# -- pyftpdlib ----------------------------------------------------------------------------


@dataclass
class Ftp:
    port: int
    root: Path


def ftp(stack: contextlib.ExitStack, work: Path) -> Ftp:
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import ThreadedFTPServer

    root = work / "ftproot"
    (root / "pub").mkdir(parents=True)
    (root / "pub" / "hello.txt").write_text("hello\n")
    (root / "ro").mkdir()
    (root / "ro" / "file.txt").write_text("read only\n")
    authorizer = DummyAuthorizer()
    authorizer.add_user("app", "app-pw", str(root), perm="elradfmwMT")
    authorizer.add_user("reader", "reader-pw", str(root), perm="elr")
    authorizer.add_anonymous(str(root / "pub"), perm="elr")

    class Handler(FTPHandler):
        pass

    Handler.authorizer = authorizer
    Handler.max_login_attempts = 10
    Handler.auth_failed_timeout = 0
    Handler.passive_ports = None
    port = free_port()
    server = ThreadedFTPServer((LOOPBACK, port), Handler)
    server.max_cons_per_ip = 4
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.2}, daemon=True)
    thread.start()

    def stop() -> None:
        server.close_all()
        thread.join(5)

    stack.callback(stop)
    wait_port(port)
    return Ftp(port, root)


# -- NATS ---------------------------------------------------------------------------------


@dataclass
class Nats:
    port: int  # users app / app-pw (all), limited / limited-pw (pub on allowed.> only)

    def url(self, user: str = "app", password: str = "app-pw") -> str:
        return f"nats://{user}:{password}@{LOOPBACK}:{self.port}"


def nats(stack: contextlib.ExitStack, work: Path) -> Nats:
    require("nats-server")
    port = free_port()
    conf = work / "nats.conf"
    conf.write_text(
        f"listen: 127.0.0.1:{port}\n"
        "max_payload: 2048\n"
        "max_connections: 40\n"
        "jetstream { store_dir: " + str(work / "js") + ", max_memory_store: 1MB, "
        "max_file_store: 10MB }\n"
        "authorization {\n"
        "  users = [\n"
        "    {user: app, password: app-pw}\n"
        '    {user: limited, password: limited-pw, permissions: {publish: ["allowed.>"], '
        'subscribe: ["_INBOX.>"]}}\n'
        "  ]\n"
        "}\n"
    )
    daemon(stack, ["nats-server", "-c", str(conf)], port, log=work / "nats.log")
    return Nats(port)


# -- RabbitMQ with its management API ------------------------------------------------------


def rabbitmq_management(
    stack: contextlib.ExitStack, work: Path, queue_arguments: dict[str, Any] | None = None
) -> int:
    """A RabbitMQ node with its management plugin on a port of its own (returned): users
    ``admin`` (administrator), ``app`` (no tag) and ``watcher`` (management, read-only on
    ``/``), password ``NAME-pw``; vhosts ``/`` and ``locked`` (nobody's); a durable queue
    ``jobs`` declared with ``queue_arguments``."""
    bin_dir = Path("/usr/lib/rabbitmq/bin")
    if not (bin_dir / "rabbitmq-server").exists():
        raise RuntimeError("rabbitmq-server is not installed (scripts/setup, CP_APT_DEV)")
    port, dist, http = free_port(), free_port(), free_port()
    users = {"admin": ["administrator"], "app": [], "watcher": ["management"]}
    defs = {
        "users": [
            {
                "name": name,
                "password_hash": _rabbit_hash(f"{name}-pw"),
                "hashing_algorithm": "rabbit_password_hashing_sha256",
                "tags": tags,
            }
            for name, tags in users.items()
        ],
        "vhosts": [{"name": "/"}, {"name": "locked"}],
        "permissions": [
            {"user": "admin", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
            {"user": "app", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
            {"user": "watcher", "vhost": "/", "configure": "^$", "write": "^$", "read": ".*"},
        ],
        "queues": [
            {
                "name": "jobs",
                "vhost": "/",
                "durable": True,
                "auto_delete": False,
                "arguments": queue_arguments or {},
            }
        ],
        "exchanges": [],
        "bindings": [],
    }
    (work / "defs.json").write_text(json.dumps(defs))
    (work / "rabbitmq.conf").write_text(
        f"listeners.tcp.default = {LOOPBACK}:{port}\n"
        f"management.tcp.port = {http}\n"
        f"management.tcp.ip = {LOOPBACK}\n"
        f"load_definitions = {work / 'defs.json'}\n"
        "loopback_users = none\n"
        "log.console = true\n"
        "log.file = false\n"
    )
    (work / "enabled_plugins").write_text("[rabbitmq_management].\n")
    home = work / "home"
    home.mkdir(exist_ok=True)
    env = rabbit_env(stack, work, port, dist)
    daemon(
        stack,
        [str(bin_dir / "rabbitmq-server")],
        http,  # the management listener comes up last: the API is ready when it listens
        log=work / "rabbitmq.log",
        env=env,
        timeout=90,
    )
    return http

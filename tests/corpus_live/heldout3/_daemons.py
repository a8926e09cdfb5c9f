"""Real servers of the third held-out half, started on 127.0.0.1 in a scratch directory and
stopped by the stack (Debian's packages, ``scripts/setup`` installs them)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import LOOPBACK, daemon, free_port, require

# -- ZooKeeper ----------------------------------------------------------------------------


@dataclass
class ZooKeeper:
    port: int

    @property
    def hosts(self) -> str:
        return f"{LOOPBACK}:{self.port}"


def zookeeper(stack: contextlib.ExitStack, work: Path) -> ZooKeeper:
    require("java")
    jar = Path("/usr/share/java/zookeeper.jar")
    if not jar.exists():
        raise RuntimeError("zookeeper is not installed (scripts/setup, CP_APT_DEV)")
    port = free_port()
    data = work / "zk-data"
    data.mkdir()
    cfg = work / "zoo.cfg"
    cfg.write_text(
        "tickTime=500\n"
        f"dataDir={data}\n"
        f"clientPort={port}\n"
        f"clientPortAddress={LOOPBACK}\n"
        "admin.enableServer=false\n"
        "4lw.commands.whitelist=\n"
    )
    daemon(
        stack,
        [
            "java",
            "-Xmx128m",
            "-cp",
            str(jar),
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            str(cfg),
        ],
        port,
        log=work / "zookeeper.log",
        timeout=60,
    )
    return ZooKeeper(port)


# -- Subversion's svnserve ----------------------------------------------------------------


@dataclass
class Svnserve:
    port: int  # repository "repo": users app (rw), reader (r); /secret only app; anon none
    config: Path  # an empty --config-dir for the client (no cached credentials)

    def url(self, path: str = "", repo: str = "repo") -> str:
        return f"svn://{LOOPBACK}:{self.port}/{repo}{path}"


_SVN_CONF = """[general]
anon-access = none
auth-access = write
password-db = passwd
authz-db = authz
realm = corpus
"""

_SVN_AUTHZ = """[/]
app = rw
reader = r

[/secret]
app = rw
reader =
"""

_PRE_COMMIT = """#!/bin/sh
if svnlook log -t "$2" "$1" | grep -q WIP; then
  echo "Commit blocked: log messages marked WIP are not accepted on this repository." >&2
  exit 1
fi
exit 0
"""


def svnserve(stack: contextlib.ExitStack, work: Path) -> Svnserve:
    import subprocess

    require("svnserve", "svnadmin", "svn")
    root = work / "svn"
    root.mkdir()
    repo = root / "repo"
    subprocess.run(["svnadmin", "create", str(repo)], check=True, capture_output=True)
    seed = work / "seed"
    (seed / "trunk").mkdir(parents=True)
    (seed / "trunk" / "a.txt").write_text("alpha\n")
    (seed / "secret").mkdir()
    (seed / "secret" / "key.txt").write_text("k\n")
    subprocess.run(
        ["svn", "import", "-q", "-m", "seed", str(seed), f"file://{repo}"],
        check=True,
        capture_output=True,
    )
    (repo / "conf" / "svnserve.conf").write_text(_SVN_CONF)
    (repo / "conf" / "passwd").write_text("[users]\napp = app-pw\nreader = reader-pw\n")
    (repo / "conf" / "authz").write_text(_SVN_AUTHZ)
    hook = repo / "hooks" / "pre-commit"
    hook.write_text(_PRE_COMMIT)
    hook.chmod(0o755)
    port = free_port()
    daemon(
        stack,
        [
            "svnserve",
            "-d",
            "--foreground",
            "--listen-host",
            LOOPBACK,
            "--listen-port",
            str(port),
            "-r",
            str(root),
        ],
        port,
        log=work / "svnserve.log",
    )
    config = work / "svn-client"
    config.mkdir()
    return Svnserve(port, config)


# -- OpenSSH's sshd -----------------------------------------------------------------------


@dataclass
class Sshd:
    port: int  # users root (a shell) and nobody (SFTP only), public keys only
    key: Path  # the client's authorized key (root and nobody)
    other_key: Path  # a key nobody authorized
    known_hosts: Path  # the server's real host key
    wrong_known_hosts: Path  # another host key under the server's name
    secret: Path  # a file only root may read (mode 0600)
    home: Path  # a directory the SFTP cases read (world-readable)


def sshd(stack: contextlib.ExitStack, work: Path) -> Sshd:
    import os
    import subprocess

    require("sshd", "ssh-keygen")
    if os.geteuid() != 0:
        raise RuntimeError("sshd needs root here (it switches to the logged-in user)")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    base = work / "ssh"
    base.mkdir()
    os.chmod(work.parent, 0o755)
    os.chmod(work, 0o755)
    os.chmod(base, 0o755)

    def keygen(name: str, kind: str = "ed25519") -> Path:
        path = base / name
        subprocess.run(
            ["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(path)],
            check=True,
            capture_output=True,
        )
        return path

    host = keygen("host_key")
    keygen("other_host_key")  # the wrong known_hosts entry names it
    key, other = keygen("client_key"), keygen("other_client_key")
    keys = base / "authorized"
    keys.mkdir()
    pub = (base / "client_key.pub").read_text()
    for user in ("root", "nobody"):
        (keys / user).write_text(pub)
        os.chmod(keys / user, 0o644)
    home = base / "files"
    home.mkdir()
    (home / "hello.txt").write_text("hello\n")
    secret = home / "secret.txt"
    secret.write_text("s\n")
    os.chmod(secret, 0o600)
    os.chmod(home, 0o755)
    port = free_port()
    config = base / "sshd_config"
    config.write_text(
        f"HostKey {host}\n"
        f"ListenAddress {LOOPBACK}\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "UsePAM no\n"
        "PidFile none\n"
        "StrictModes no\n"
        f"AuthorizedKeysFile {keys}/%u\n"
        "PermitRootLogin prohibit-password\n"
        "MaxAuthTries 3\n"
        "LoginGraceTime 20\n"
        "Subsystem sftp internal-sftp\n"
        "Match User nobody\n"
        "  ForceCommand internal-sftp\n"
    )
    daemon(
        stack,
        ["/usr/sbin/sshd", "-D", "-e", "-f", str(config), "-p", str(port)],
        port,
        log=work / "sshd.log",
    )
    host_pub = (base / "host_key.pub").read_text().split()
    other_pub = (base / "other_host_key.pub").read_text().split()
    known = base / "known_hosts"
    known.write_text(f"[{LOOPBACK}]:{port} {host_pub[0]} {host_pub[1]}\n")
    wrong = base / "wrong_known_hosts"
    wrong.write_text(f"[{LOOPBACK}]:{port} {other_pub[0]} {other_pub[1]}\n")
    return Sshd(port, key, other, known, wrong, secret, home)


# -- Dovecot (IMAP) -----------------------------------------------------------------------


@dataclass
class Dovecot:
    port: int  # users app / app-pw (quota 2 KiB), other / other-pw


def dovecot(stack: contextlib.ExitStack, work: Path) -> Dovecot:
    import os

    require("dovecot")
    base = work / "dovecot"
    for d in ("run", "state", "mail"):
        (base / d).mkdir(parents=True)
    for p in (work.parent, work, base, base / "mail"):
        os.chmod(p, 0o755)
    os.chmod(base / "mail", 0o777)
    users = base / "users"
    users.write_text("app:{PLAIN}app-pw::::::\nother:{PLAIN}other-pw::::::\n")
    port = free_port()
    conf = base / "dovecot.conf"
    conf.write_text(
        f"base_dir = {base / 'run'}\n"
        f"state_dir = {base / 'state'}\n"
        "log_path = /dev/stderr\n"
        "protocols = imap\n"
        f"listen = {LOOPBACK}\n"
        "ssl = no\n"
        "disable_plaintext_auth = no\n"
        "auth_mechanisms = plain login\n"
        "auth_failure_delay = 0\n"
        "login_trusted_networks = 127.0.0.0/8\n"
        "mail_uid = nobody\n"
        "mail_gid = nogroup\n"
        "first_valid_uid = 1\n"
        "mail_plugins = quota\n"
        f"mail_location = maildir:{base / 'mail'}/%u\n"
        "passdb {\n"
        "  driver = passwd-file\n"
        f"  args = scheme=PLAIN username_format=%u {users}\n"
        "}\n"
        "userdb {\n"
        "  driver = static\n"
        f"  args = uid=nobody gid=nogroup home={base / 'mail'}/%u\n"
        "}\n"
        "plugin {\n"
        "  quota = maildir:User quota\n"
        "  quota_rule = *:storage=2K\n"
        "}\n"
        "service imap-login {\n"
        "  inet_listener imap {\n"
        f"    address = {LOOPBACK}\n"
        f"    port = {port}\n"
        "  }\n"
        "  inet_listener imaps {\n"
        "    port = 0\n"
        "  }\n"
        "}\n"
        "service auth {\n"
        "  unix_listener auth-userdb {\n"
        "    mode = 0666\n"
        "  }\n"
        "}\n"
    )
    daemon(stack, ["dovecot", "-F", "-c", str(conf)], port, log=work / "dovecot.log")
    return Dovecot(port)


# -- ProFTPD ------------------------------------------------------------------------------


@dataclass
class Proftpd:
    port: int  # users app / app-pw (home files/, jailed), solo / solo-pw (one session)
    home: Path


def proftpd(stack: contextlib.ExitStack, work: Path) -> Proftpd:
    import os
    import subprocess

    require("proftpd", "openssl")
    base = work / "ftp"
    home = base / "files"
    (home / "docs").mkdir(parents=True)
    (home / "full" / "x").mkdir(parents=True)
    (home / "docs" / "readme.txt").write_text("hello\n")
    (home / "locked").mkdir()
    for p in (work.parent, work, base):
        os.chmod(p, 0o755)
    for root, dirs, files in os.walk(home):
        for name in dirs + files:
            os.chown(os.path.join(root, name), 65534, 65534)
    os.chown(home, 65534, 65534)
    os.chown(home / "locked", 0, 0)
    os.chmod(home / "locked", 0o755)

    def crypt(pw: str) -> str:
        out = subprocess.run(
            ["openssl", "passwd", "-6", pw], check=True, capture_output=True, text=True
        )
        return out.stdout.strip()

    users = base / "passwd"
    users.write_text(
        f"app:{crypt('app-pw')}:65534:65534::{home}:/bin/false\n"
        f"solo:{crypt('solo-pw')}:65534:65534::{home}:/bin/false\n"
    )
    os.chmod(users, 0o600)
    groups = base / "group"
    groups.write_text("nogroup:x:65534:\n")
    os.chmod(groups, 0o600)
    port = free_port()
    conf = base / "proftpd.conf"
    conf.write_text(
        'ServerName "corpus"\n'
        "ServerType standalone\n"
        "DefaultServer on\n"
        f"Port {port}\n"
        f"DefaultAddress {LOOPBACK}\n"
        "SocketBindTight on\n"
        "UseIPv6 off\n"
        "User nobody\n"
        "Group nogroup\n"
        f"PidFile {base / 'proftpd.pid'}\n"
        f"ScoreboardFile {base / 'scoreboard'}\n"
        "WtmpLog off\n"
        "UseReverseDNS off\n"
        "AuthOrder mod_auth_file.c\n"
        f"AuthUserFile {users}\n"
        f"AuthGroupFile {groups}\n"
        "RequireValidShell off\n"
        "DefaultRoot ~\n"
        "MaxLoginAttempts 10\n"
        "MaxStoreFileSize 4 Kb\n"
        "PassivePorts 49152 65534\n"
        "<Limit DELE>\n  DenyUser solo\n</Limit>\n"
        "MaxClientsPerUser 2\n"
        "AllowOverwrite on\n"
    )
    daemon(stack, ["proftpd", "-n", "-q", "-c", str(conf)], port, log=work / "proftpd.log")
    return Proftpd(port, home)


# -- an SMTP submission server answering Postfix's replies --------------------------------

#: RCPT TO replies by local part (any other recipient is accepted)
SMTP_RCPT = {
    "nobody": "550 5.1.1 <{rcpt}>: Recipient address rejected: User unknown in virtual mailbox "
    "table",
    "full": "552 5.2.2 <{rcpt}>: Recipient address rejected: Mailbox full",
    "grey": "450 4.2.0 <{rcpt}>: Recipient address rejected: Greylisted, see "
    "http://postgrey.schweikert.ch/help/example.org.html",
}


@dataclass
class Submission:
    port: int  # users app / app-pw; max message 2048 bytes
    busy_port: int  # greets with 421 too many connections


def submission(stack: contextlib.ExitStack, work: Path) -> Submission:
    import base64
    import socketserver
    import threading

    def handler(busy: bool) -> type[socketserver.StreamRequestHandler]:
        class Handler(socketserver.StreamRequestHandler):
            def say(self, line: str) -> None:
                self.wfile.write(line.encode() + b"\r\n")

            def handle(self) -> None:
                if busy:
                    self.say(
                        "421 4.7.0 mail.example.org Error: too many connections from 127.0.0.1"
                    )
                    return
                self.say("220 mail.example.org ESMTP Postfix (Debian/GNU)")
                authed = False
                while True:
                    raw = self.rfile.readline(4096)
                    if not raw:
                        return
                    line = raw.decode(errors="replace").rstrip("\r\n")
                    verb = line.split(" ", 1)[0].upper()
                    if verb in ("EHLO", "HELO"):
                        self.say(
                            "250-mail.example.org\r\n250-PIPELINING\r\n250-SIZE 2048\r\n"
                            "250-AUTH PLAIN LOGIN\r\n250-ENHANCEDSTATUSCODES\r\n250-8BITMIME\r\n"
                            "250 DSN"
                        )
                    elif verb == "AUTH":
                        parts = line.split()
                        blob = parts[2] if len(parts) > 2 else ""
                        if not blob:
                            self.say("334 ")
                            blob = self.rfile.readline(4096).decode().strip()
                        fields = base64.b64decode(blob + "==").split(b"\0")
                        if fields[1:] == [b"app", b"app-pw"]:
                            authed = True
                            self.say("235 2.7.0 Authentication successful")
                        else:
                            self.say(
                                "535 5.7.8 Error: authentication failed: authentication failure"
                            )
                    elif verb == "MAIL":
                        if "blocked@" in line:
                            self.say(
                                "553 5.7.1 <blocked@example.org>: Sender address rejected: not "
                                "owned by user app"
                            )
                        else:
                            self.say("250 2.1.0 Ok")
                    elif verb == "RCPT":
                        rcpt = line.split("<", 1)[-1].rstrip(">")
                        local, _, domain = rcpt.partition("@")
                        if not authed and domain != "example.org":
                            self.say(f"554 5.7.1 <{rcpt}>: Relay access denied")
                        elif local in SMTP_RCPT:
                            self.say(SMTP_RCPT[local].format(rcpt=rcpt))
                        else:
                            self.say("250 2.1.5 Ok")
                    elif verb == "DATA":
                        self.say("354 End data with <CR><LF>.<CR><LF>")
                        size = 0
                        body = b""
                        while True:
                            chunk = self.rfile.readline(65536)
                            if not chunk or chunk in (b".\r\n", b".\n"):
                                break
                            size += len(chunk)
                            body += chunk[:200]
                        if size > 2048:
                            self.say("552 5.3.4 Message size exceeds fixed limit")
                        elif b"X-Spam: yes" in body:
                            self.say("554 5.7.1 Spam message rejected")
                        else:
                            self.say("250 2.0.0 Ok: queued as 4XyZ1k0RZzz")
                    elif verb == "RSET":
                        self.say("250 2.0.0 Ok")
                    elif verb == "QUIT":
                        self.say("221 2.0.0 Bye")
                        return
                    else:
                        self.say("502 5.5.2 Error: command not recognized")

        return Handler

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client that hangs up after a refusal (msmtp pipelines) is not news

    ports = []
    for busy in (False, True):
        server = Server((LOOPBACK, 0), handler(busy))
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        ).start()

        def stop(s: Server = server) -> None:
            s.shutdown()
            s.server_close()

        stack.callback(stop)
        ports.append(int(server.server_address[1]))
    return Submission(ports[0], ports[1])


# -- Redis (streams) ----------------------------------------------------------------------


@dataclass
class RedisStreams:
    port: int  # users app / app-pw (all), reader / reader-pw (reads only); default user off
    full_port: int  # maxmemory 1 byte, noeviction: every write is refused
    replica_port: int  # a read-only replica whose primary is down (serve-stale-data no)


def redis_streams(stack: contextlib.ExitStack, work: Path) -> RedisStreams:
    require("redis-server")
    acl = work / "users.acl"
    acl.write_text(
        "user default off\n"
        "user app on >app-pw ~* &* +@all\n"
        "user reader on >reader-pw ~* &* -@all +@read +@connection +xreadgroup\n"
    )

    def start(name: str, *extra: str) -> int:
        port = free_port()
        daemon(
            stack,
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                LOOPBACK,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(work),
                *extra,
            ],
            port,
            log=work / f"redis-{name}.log",
        )
        return port

    main = start("main", "--aclfile", str(acl))
    full = start("full", "--maxmemory", "1", "--maxmemory-policy", "noeviction")
    replica = start(
        "replica",
        "--replicaof",
        LOOPBACK,
        str(free_port()),
        "--replica-serve-stale-data",
        "no",
    )
    return RedisStreams(main, full, replica)

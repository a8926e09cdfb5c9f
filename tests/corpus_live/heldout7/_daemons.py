"""Real servers of the seventh held-out half, started on 127.0.0.1 in a scratch directory and
stopped by the stack: Dovecot 2.3 serving IMAP and POP3 (Debian's ``dovecot-imapd`` and
``dovecot-pop3d``)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import LOOPBACK, daemon, free_port, require, wait_port

# -- Dovecot (IMAP and POP3) --------------------------------------------------------------

#: passwd-file lines: app (2 KiB quota, mail in INBOX), other, a disabled account (nologin
#: with a reason), an account only allowed from another network, and one with a 1-session
#: limit per user and IP
_USERS = (
    "app:{PLAIN}app-pw::::::\n"
    "other:{PLAIN}other-pw::::::\n"
    "disabled:{PLAIN}disabled-pw::::::nologin reason=Suspended\n"
    "remote:{PLAIN}remote-pw::::::allow_nets=10.9.0.0/16\n"
    "single:{PLAIN}single-pw::::::\n"
)


@dataclass
class MailServer:
    imap: int
    pop3: int
    mail: Path  # the maildir root (one directory per user)


def dovecot_mail(stack: contextlib.ExitStack, work: Path) -> MailServer:
    require("dovecot")
    if not Path("/usr/lib/dovecot/pop3").exists():
        raise RuntimeError("dovecot-pop3d is not installed (scripts/setup, CP_APT_DEV)")
    base = work / "dovecot"
    for d in ("run", "state", "mail"):
        (base / d).mkdir(parents=True)
    for p in (work.parent, work, base, base / "mail"):
        os.chmod(p, 0o755)
    os.chmod(base / "mail", 0o777)
    # two messages in app's INBOX (a maildir written directly, as a delivery agent would)
    for user in ("app", "single"):
        for sub in ("cur", "new", "tmp"):
            (base / "mail" / user / sub).mkdir(parents=True)
        for i in (1, 2):
            (base / "mail" / user / "new" / f"100000000{i}.M{i}P1.corpus").write_text(
                f"From: a@example.org\r\nTo: {user}@example.org\r\nSubject: m{i}\r\n\r\nbody {i}\r\n"
            )
    for root, dirs, files in os.walk(base / "mail"):
        for name in dirs:
            os.chmod(Path(root) / name, 0o777)
        for name in files:
            os.chmod(Path(root) / name, 0o666)
    users = base / "users"
    users.write_text(_USERS)
    imap, pop3 = free_port(), free_port()
    conf = base / "dovecot.conf"
    conf.write_text(
        f"base_dir = {base / 'run'}\n"
        f"state_dir = {base / 'state'}\n"
        "log_path = /dev/stderr\n"
        "protocols = imap pop3\n"
        f"listen = {LOOPBACK}\n"
        "ssl = no\n"
        "disable_plaintext_auth = no\n"
        "auth_mechanisms = plain login\n"
        "auth_failure_delay = 0\n"
        "mail_uid = nobody\n"
        "mail_gid = nogroup\n"
        "first_valid_uid = 1\n"
        "mail_plugins = quota\n"
        "pop3_uidl_format = %08Xu%08Xv\n"
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
        "protocol imap {\n"
        "  mail_max_userip_connections = 1\n"
        "}\n"
        "protocol pop3 {\n"
        "  mail_max_userip_connections = 1\n"
        "}\n"
        "service imap-login {\n"
        "  inet_listener imap {\n"
        f"    address = {LOOPBACK}\n"
        f"    port = {imap}\n"
        "  }\n"
        "  inet_listener imaps {\n"
        "    port = 0\n"
        "  }\n"
        "}\n"
        "service pop3-login {\n"
        "  inet_listener pop3 {\n"
        f"    address = {LOOPBACK}\n"
        f"    port = {pop3}\n"
        "  }\n"
        "  inet_listener pop3s {\n"
        "    port = 0\n"
        "  }\n"
        "}\n"
        # no auth penalty (the growing delay after failed logins from an IP): cases run in turn
        "service anvil {\n"
        "  unix_listener anvil-auth-penalty {\n"
        "    mode = 0\n"
        "  }\n"
        "}\n"
        "service auth {\n"
        "  unix_listener auth-userdb {\n"
        "    mode = 0666\n"
        "  }\n"
        "}\n"
    )
    daemon(stack, ["dovecot", "-F", "-c", str(conf)], imap, log=work / "dovecot.log")
    wait_port(pop3)
    return MailServer(imap, pop3, base / "mail")

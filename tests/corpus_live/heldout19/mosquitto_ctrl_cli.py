"""The ``mosquitto_ctrl`` CLI (Debian's mosquitto-clients 2.0) run as a pack runs it, its
``dynsec`` module administering a real Mosquitto 2.0 broker (Debian's ``mosquitto``) that
loads the dynamic security plugin (its JSON made by ``mosquitto_ctrl dynsec init``: an
``admin`` client, then an ``app`` client with no admin role and a ``reader`` role); and a
second real broker without the plugin (nobody answers on ``$CONTROL``). mosquitto_ctrl
exits 0 when the broker refuses a command or the login: the pack raises on the error line
it writes to stderr, and on a non-zero exit status (its own checks, connection failures)."""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    UNRESOLVABLE,
    Net,
    daemon,
    family,
    free_port,
    net,
    require,
)
from corpus_live.servers import mosquitto

_PLUGIN = "/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so"


@dataclass
class Ctx:
    port: int  # dynsec broker: admin / admin-pw, app / app-pw (no admin role)
    plain_port: int  # a broker without the plugin (anonymous allowed)
    net: Net


class CtlError(RuntimeError):
    """mosquitto_ctrl exited 0 but wrote an error line: the pack's own exception."""


def _ctl(
    port: int,
    *args: str,
    user: str | None = "admin",
    password: str | None = "admin-pw",
    host: str = LOOPBACK,
    timeout: float = 5.0,
) -> str:
    argv = ["mosquitto_ctrl", "-h", host, "-p", str(port)]
    if user:
        argv += ["-u", user, "-P", password or ""]
    done = subprocess.run(
        [*argv, "dynsec", *args],
        check=False,  # it exits 0 when the broker refuses: see below
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    errors = [
        line
        for line in done.stderr.decode(errors="replace").splitlines()
        if "error" in line.lower()
    ]
    if errors:
        raise CtlError(f"mosquitto_ctrl dynsec {args[0]}: {errors[-1]}")
    return done.stdout.decode(errors="replace")


def _setup(stack: contextlib.ExitStack, work: Path) -> Ctx:
    require("mosquitto", "mosquitto_ctrl")
    if not Path(_PLUGIN).exists():
        raise RuntimeError(f"not installed: {_PLUGIN} (mosquitto)")
    config = work / "dynsec.json"
    subprocess.run(
        ["mosquitto_ctrl", "dynsec", "init", str(config), "admin", "admin-pw"],
        check=True,
        capture_output=True,
        timeout=10,
    )
    port = free_port()
    conf = work / "dynsec.conf"
    conf.write_text(
        "user root\n"
        f"listener {port} {LOOPBACK}\n"
        "allow_anonymous false\n"
        "persistence false\n"
        f"plugin {_PLUGIN}\n"
        f"plugin_opt_config_file {config}\n"
    )
    daemon(stack, ["mosquitto", "-c", str(conf)], port, log=work / "mosquitto-dynsec.log")
    _ctl(port, "createClient", "app", "-p", "app-pw")
    _ctl(port, "createRole", "reader")
    plain = work / "plain"
    plain.mkdir()
    return Ctx(port, mosquitto(stack, plain).anon_port, net(stack))


FAM = family(
    "mosquitto_ctrl",
    "the mosquitto_ctrl CLI against Mosquitto 2.0 with dynamic security (Debian), real",
    _setup,
    half="heldout19",
)


@FAM.case("wrong_password", AUTH, "CONNACK not authorized: the admin password is wrong")
def _wrong_password(c: Ctx) -> Any:
    return _ctl(c.port, "listClients", password="not-the-password")


@FAM.case(
    "not_admin",
    AUTH,
    "the app client may not subscribe to the $CONTROL responses: Subscribe error: Not authorized",
)
def _not_admin(c: Ctx) -> Any:
    return _ctl(c.port, "listClients", user="app", password="app-pw")


@FAM.case("client_exists", EXISTS, "createClient of a username that exists: Client already exists")
def _client_exists(c: Ctx) -> Any:
    return _ctl(c.port, "createClient", "app", "-p", "other-pw")


@FAM.case("role_exists", EXISTS, "createRole of a role that exists: Role already exists")
def _role_exists(c: Ctx) -> Any:
    return _ctl(c.port, "createRole", "reader")


@FAM.case("client_not_found", NF, "getClient of an unknown username: Client not found")
def _client_missing(c: Ctx) -> Any:
    return _ctl(c.port, "getClient", "sensor-17")


@FAM.case("delete_not_found", NF, "deleteClient of an unknown username: Client not found")
def _delete_missing(c: Ctx) -> Any:
    return _ctl(c.port, "deleteClient", "sensor-17")


@FAM.case("role_not_found", NF, "addClientRole with a role that does not exist: Role not found")
def _role_missing(c: Ctx) -> Any:
    return _ctl(c.port, "addClientRole", "app", "writer", "1")


@FAM.case("bad_acl_type", INT, "the pack passes an ACL type that does not exist (rc 3)")
def _bad_acl(c: Ctx) -> Any:
    return _ctl(c.port, "addRoleACL", "reader", "publishEverything", "sensors/#", "allow")


@FAM.case("unknown_command", INT, "the pack's dynsec command is not one mosquitto_ctrl knows")
def _unknown(c: Ctx) -> Any:
    return _ctl(c.port, "renameClient", "app", "app2")


@FAM.case(
    "no_plugin",
    TO,
    "the broker has no dynamic security plugin: no response ever comes, the pack's deadline",
)
def _no_plugin(c: Ctx) -> Any:
    return _ctl(c.plain_port, "listClients", user=None, timeout=2)


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    return _ctl(c.net.closed, "listClients")


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    return _ctl(1883, "listClients", host=UNRESOLVABLE)


@FAM.case("silent", TO, "server never answers CONNECT: the pack's own deadline expires")
def _silent(c: Ctx) -> Any:
    return _ctl(c.net.silent, "listClients", timeout=2)


@FAM.case(
    "dropped",
    NET | TO,
    "closed at once: mosquitto_ctrl reconnects until the pack's own deadline expires",
)
def _dropped(c: Ctx) -> Any:
    return _ctl(c.net.close_now, "listClients", timeout=2)


@FAM.case(
    "garbage",
    NET | TO,
    "the peer answers bytes of no protocol: mosquitto_ctrl reconnects until the pack's deadline",
)
def _garbage(c: Ctx) -> Any:
    return _ctl(c.net.garbage, "listClients", timeout=2)

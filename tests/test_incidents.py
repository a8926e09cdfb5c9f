"""The incident store: lookups by reference id, aggregation, retention, concurrent writers."""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from child_processes import tied

from control_plane import PackError
from control_plane._features.observability.events import ErrorEvent, ErrorEvents
from control_plane._features.observability.incident_store import IncidentStore, default_incident_db
from control_plane._features.observability.journal import IncidentJournal
from control_plane._features.observability.observability import (
    IncidentNotFound,
    aggregate_errors,
    install,
    parse_duration,
    show_incident,
)
from control_plane._features.observability.observability_cli import add_commands
from control_plane._kernel.incidents import Incident
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.pack import Pack
from control_plane._kernel.registry import Registry

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cr3t-planted-value"
DAY = 86400.0


class DownstreamError(Exception):
    pass


def _handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    what = doc["what"]
    if what == "secret":
        try:
            raise DownstreamError(f"login refused: Authorization: Bearer {SECRET}xyz")
        except DownstreamError as exc:
            raise RuntimeError(f"could not sync with https://bot:{SECRET}@git.example/x") from exc
    if what == "undeclared":
        raise PackError("made_up_code", f"token={SECRET}")
    if what == "ok":
        return {"ok": True}
    raise PackError(what, f"{what}!")


def make_invoker() -> Invoker:
    registry = Registry()
    for name in ("t.alpha", "t.beta"):
        registry.register(
            Pack(
                name=name,
                version="1.0.0",
                summary="fails on demand",
                input_schema={
                    "type": "object",
                    "properties": {"what": {"type": "string"}},
                    "required": ["what"],
                },
                output_schema={
                    "type": "object",
                    "properties": {
                        "ok": {"type": "boolean"},
                        "error": {
                            "type": "object",
                            "properties": {"code": {"enum": ["not_found", "auth_failed"]}},
                        },
                    },
                },
                handler=_handler,
            ),
            "tests",
        )
    return Invoker(registry)


def incident(ref: str, created_at: float | None = None, **kw: Any) -> Incident:
    fields: dict[str, Any] = {
        "reference_id": ref,
        "pack": "t.alpha",
        "request_id": f"rq-{ref}",
        "kind": "unclassified",
        "summary": f"summary of {ref}",
        "traceback": f"Traceback (most recent call last):\n  {ref}\nRuntimeError: {ref}\n",
        "created_at": time.time() if created_at is None else created_at,
    }
    fields.update(kw)
    return Incident(**fields)


def test_reference_id_the_caller_got_resolves_to_the_full_scrubbed_traceback(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state" / "incidents.db"
    invoker = make_invoker()
    obs = install(invoker, events=ErrorEvents(), store=IncidentStore(db))
    secret_call = invoker.invoke_sync("t.alpha", {"what": "secret"}, request_id="rq-secret")
    violation = invoker.invoke_sync("t.beta", {"what": "undeclared"}, request_id="rq-violation")
    invoker.invoke_sync("t.alpha", {"what": "not_found"})
    invoker.invoke_sync("t.alpha", {"what": "ok"})
    assert obs.store is not None
    assert obs.store.flush()

    assert secret_call.error is not None
    assert secret_call.error.code == "internal_error"
    assert SECRET not in json.dumps(secret_call.to_dict())
    ref = secret_call.error.reference_id
    assert ref is not None
    found = obs.store.get(ref)
    assert found is not None
    assert (found.pack, found.request_id, found.kind) == ("t.alpha", "rq-secret", "unclassified")
    # The whole chain: the cause, the "direct cause" banner, the outer error, the frames.
    assert "Traceback (most recent call last)" in found.traceback
    assert "DownstreamError: login refused" in found.traceback
    assert "The above exception was the direct cause" in found.traceback
    assert "RuntimeError: could not sync with https://" in found.traceback
    assert "_handler" in found.traceback
    assert SECRET not in found.traceback and SECRET not in found.summary
    assert found == invoker.incidents.get(ref)

    assert violation.error is not None and violation.error.reference_id is not None
    contract = obs.store.get(violation.error.reference_id)
    assert contract is not None
    assert contract.kind == "contract_violation"
    assert "made_up_code" in contract.summary and SECRET not in contract.summary

    # Secrets are scrubbed at rest: not in any byte the database wrote.
    obs.close()
    for part in db.parent.iterdir():
        assert SECRET.encode() not in part.read_bytes(), part
    assert (db.stat().st_mode & 0o777) == 0o600
    assert (db.parent.stat().st_mode & 0o777) == 0o700
    reopened = IncidentStore(db, read_only=True)
    assert reopened.get(ref) == found
    assert reopened.get("ref_0000000000000000") is None
    assert reopened.errors(by="code") == [("internal_error", 2), ("not_found", 1)]


def test_store_scrubs_what_other_writers_hand_it(tmp_path: Path) -> None:
    leaky = ErrorEvent.rejection("unknown_pack", pack="x.y", message="m").to_dict()
    leaky["message"] = f"api_key={SECRET}"
    with IncidentStore(tmp_path / "i.db") as store:
        store.add_incident(incident("ref_01", traceback=f"password={SECRET}\n"))
        store.add_event(ErrorEvent.from_dict(leaky))
        assert store.flush()
        got = store.get("ref_01")
        assert got is not None and SECRET not in got.traceback
        assert store.events()[0].message == "api_key=[REDACTED]"
    for part in tmp_path.iterdir():
        assert SECRET.encode() not in part.read_bytes()


def test_errors_aggregate_by_code_pack_and_origin_within_a_window(tmp_path: Path) -> None:
    invoker = make_invoker()
    obs = install(invoker, events=ErrorEvents(), store=IncidentStore(tmp_path / "i.db"))
    for pack, what in [
        ("t.alpha", "not_found"),
        ("t.alpha", "not_found"),
        ("t.alpha", "auth_failed"),
        ("t.beta", "not_found"),
        ("t.beta", "secret"),
        ("t.beta", "ok"),
    ]:
        invoker.invoke_sync(pack, {"what": what})
    obs.emit_rejection("overloaded", pack="t.alpha")
    store = obs.store
    assert store is not None
    old = ErrorEvent.rejection("unknown_pack", pack="z.z", message="old", at=time.time() - 2 * 3600)
    store.add_event(old)
    assert store.flush()

    by_code = store.errors(since=3600, by="code")
    assert by_code[0] == ("not_found", 3)
    assert sorted(by_code[1:]) == [("auth_failed", 1), ("internal_error", 1), ("overloaded", 1)]
    assert store.errors(since=3600, by="pack") == [("t.alpha", 4), ("t.beta", 2)]
    assert store.errors(since=3600, by="origin") == [
        ("pack:t.alpha", 3),
        ("control_plane", 1),
        ("pack:t.beta", 1),
        ("transport", 1),
    ]
    assert ("unknown_pack", 1) in store.errors(since=None, by="code")
    assert store.errors(since=60, by="code")[0] == ("not_found", 3)
    with pytest.raises(ValueError, match="group"):
        store.errors(by="nope")  # type: ignore[arg-type]

    table = aggregate_errors(store, 3600, "pack")
    assert table.splitlines()[0].split() == ["pack", "count"]
    assert table.splitlines()[1].split() == ["t.alpha", "4"]
    assert "total" in table and "the last 1h" in table
    data = json.loads(aggregate_errors(store, None, "origin", as_json=True))
    assert data["total"] == 7
    assert {"origin": "transport", "count": 2} in data["counts"]
    assert aggregate_errors(store, 1e-9, "code") == "no errors in the last 1e-09s"
    obs.close()


def test_cli_commands_show_an_incident_and_aggregate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "i.db"
    invoker = make_invoker()
    obs = install(invoker, events=ErrorEvents(), store=IncidentStore(db))
    outcome = invoker.invoke_sync("t.beta", {"what": "secret"}, request_id="rq-cli")
    obs.close()
    assert outcome.error is not None and outcome.error.reference_id is not None
    ref = outcome.error.reference_id

    parser = argparse.ArgumentParser(prog="packctl")
    add_commands(parser.add_subparsers(dest="command", required=True))

    args = parser.parse_args(["incident", ref, "--incident-db", str(db)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert f"reference_id: {ref}" in out
    assert "request_id:   rq-cli" in out
    assert "DownstreamError" in out and SECRET not in out

    args = parser.parse_args(["incident", ref, "--incident-db", str(db), "--output", "json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["pack"] == "t.beta"

    args = parser.parse_args(["incident", "ref_ffffffffffffffff", "--incident-db", str(db)])
    assert args.func(args) == 1
    assert "no incident 'ref_ffffffffffffffff'" in capsys.readouterr().err

    args = parser.parse_args(
        ["errors", "--incident-db", str(db), "--since", "1h", "--by", "origin"]
    )
    assert args.since == 3600
    assert args.func(args) == 0
    assert "control_plane" in capsys.readouterr().out

    args = parser.parse_args(
        ["errors", "--incident-db", str(tmp_path / "missing.db"), "--output", "json"]
    )
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0
    assert not (tmp_path / "missing.db").exists()

    with pytest.raises(SystemExit):
        parser.parse_args(["errors", "--since", "soon"])
    with pytest.raises(IncidentNotFound):
        show_incident(IncidentStore(db, read_only=True), "ref_00")


def test_parse_duration() -> None:
    assert parse_duration("30s") == 30
    assert parse_duration("15m") == 900
    assert parse_duration("1h") == 3600
    assert parse_duration("1h30m") == 5400
    assert parse_duration("7d") == 7 * DAY
    assert parse_duration("2w") == 14 * DAY
    assert parse_duration("90") == 90
    assert parse_duration("all") is None
    for bad in ("soon", "1x", "h1", "-5", "1h 2m", "nan", "inf", "-inf", "1e999", "1e999s"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_default_path_follows_env_and_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CAPABILITY_PACKS_INCIDENT_DB", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_incident_db() == tmp_path / "xdg" / "capability-packs" / "incidents.db"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_incident_db() == (
        tmp_path / "home" / ".local" / "state" / "capability-packs" / "incidents.db"
    )
    monkeypatch.setenv("CAPABILITY_PACKS_INCIDENT_DB", str(tmp_path / "explicit.db"))
    assert default_incident_db() == tmp_path / "explicit.db"
    with IncidentStore() as store:
        assert store.path == tmp_path / "explicit.db"
    assert (tmp_path / "explicit.db").exists()


# -- retention ---------------------------------------------------------------------------


def test_retention_by_age_on_write_and_on_open(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    now = time.time()
    with IncidentStore(db, max_age=None, max_rows=None) as keep_all:
        for i in range(5):
            keep_all.add_incident(incident(f"ref_old{i}", now - 10 * DAY))
            keep_all.add_event(
                ErrorEvent.rejection("unknown_pack", pack="a.b", message="m", at=now - 10 * DAY)
            )
        keep_all.add_incident(incident("ref_new", now))
        assert keep_all.flush()
        assert keep_all.counts() == {"incidents": 6, "events": 5}
    # Opening with a one-day retention prunes what is older.
    with IncidentStore(db, max_age=DAY, prune_interval=0) as store:
        assert store.flush()
        assert store.counts() == {"incidents": 1, "events": 0}
        assert store.get("ref_new") is not None
        assert store.get("ref_old0") is None
        # And writing prunes too: an old record is gone as soon as it is written.
        store.add_incident(incident("ref_late_but_old", now - 2 * DAY))
        store.add_incident(incident("ref_fresh", now))
        assert store.flush()
        assert store.get("ref_late_but_old") is None
        assert store.counts()["incidents"] == 2


def test_retention_by_row_count_keeps_the_newest(tmp_path: Path) -> None:
    with IncidentStore(tmp_path / "i.db", max_rows=50, prune_interval=0, batch_size=7) as store:
        for i in range(120):
            store.add_incident(incident(f"ref_{i:04d}"))
            store.add_event(ErrorEvent.rejection("unknown_pack", pack=f"p.n{i}", message="m"))
        assert store.flush()
        assert store.counts() == {"incidents": 50, "events": 50}
        kept = {i.reference_id for i in store.recent(limit=1000)}
        assert kept == {f"ref_{i:04d}" for i in range(70, 120)}
        assert {e.pack for e in store.events(limit=1000)} == {f"p.n{i}" for i in range(70, 120)}


def test_an_event_delivered_twice_is_stored_once(tmp_path: Path) -> None:
    """Its id and timestamp are the event's own: the object again, or its JSON form read
    back (a sink forwarding it), is the same row; another event of the same call is not."""
    event = ErrorEvent.rejection("unknown_pack", pack="p.dup", message="m")
    again = ErrorEvent.from_dict(json.loads(event.to_json()))
    other = ErrorEvent.rejection("unknown_pack", pack="p.dup", message="m")
    with IncidentStore(tmp_path / "i.db") as store:
        for delivered in (event, again, event, other):
            store.add_event(delivered)
        assert store.flush()
        assert store.counts()["events"] == 2
        assert {e.event_id for e in store.events()} == {event.event_id, other.event_id}


#: The events table as schema 1 made it (``event_id`` the primary key).
_SCHEMA1_EVENTS = """CREATE TABLE events (
    event_id TEXT PRIMARY KEY, created_at REAL NOT NULL, event TEXT NOT NULL,
    code TEXT NOT NULL, pack TEXT NOT NULL, version TEXT, origin TEXT NOT NULL,
    retryable INTEGER NOT NULL, reference_id TEXT, request_id TEXT, body TEXT NOT NULL)"""


def test_a_schema1_database_keeps_its_events_and_moves_to_the_time_ordered_key(
    tmp_path: Path,
) -> None:
    db = tmp_path / "i.db"
    old = [ErrorEvent.rejection("unknown_pack", pack=f"p.old{i}", message="m") for i in range(3)]
    conn = sqlite3.connect(db)
    conn.execute(_SCHEMA1_EVENTS)
    conn.execute("CREATE INDEX events_created_at ON events(created_at)")
    conn.executemany(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                e.event_id,
                e.epoch,
                e.event,
                e.code,
                e.pack,
                e.version,
                e.origin,
                0,
                None,
                None,
                e.to_json().decode(),
            )
            for e in old
        ],
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with IncidentStore(db) as store:
        assert {e.pack for e in store.events()} == {"p.old0", "p.old1", "p.old2"}
        store.add_event(old[0])  # already there: ignored
        store.add_event(ErrorEvent.rejection("unknown_pack", pack="p.new", message="m"))
        assert store.flush()
        assert store.counts()["events"] == 4
    conn = sqlite3.connect(db)  # an older version opens it: makes its index again
    conn.execute("CREATE INDEX IF NOT EXISTS events_created_at ON events(created_at)")
    conn.commit()
    conn.close()
    with IncidentStore(db) as store:  # opening again changes nothing but that
        assert {e.pack for e in store.events()} == {"p.old0", "p.old1", "p.old2", "p.new"}
        assert store.integrity_check() == "ok"
    conn = sqlite3.connect(db)
    (table,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
    indexes = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    plan = " ".join(
        str(row[-1])
        for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT body FROM events WHERE created_at >= ?"
            " ORDER BY created_at DESC, rowid DESC LIMIT 5",
            (0.0,),
        )
    )
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()
    assert "UNIQUE (created_at, event_id)" in table
    assert "events_created_at" not in indexes and "events_schema1" not in table
    assert "USING INDEX" in plan  # the time-window queries read the key's index


def test_pruning_on_write_happens_at_most_every_interval(tmp_path: Path) -> None:
    with IncidentStore(tmp_path / "i.db", max_rows=5, prune_interval=3600) as store:
        for i in range(20):
            store.add_incident(incident(f"ref_{i:04d}"))
        assert store.flush()
        assert store.counts()["incidents"] == 20
        assert store.prune() == 15
        assert store.counts()["incidents"] == 5


def test_a_full_queue_drops_and_counts_instead_of_blocking(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    store = IncidentStore(db, queue_size=4, batch_size=1, busy_timeout=10)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # hold the write lock: the writer thread waits
    try:
        started = time.perf_counter()
        for i in range(50):
            store.add_incident(incident(f"ref_{i:04d}"))
        assert time.perf_counter() - started < 0.5
        assert store.dropped >= 40
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert store.flush()
    written = store.counts()["incidents"]
    assert written + store.dropped == 50
    store.close()
    store.add_incident(incident("ref_after_close"))
    assert store.dropped == 50 - written + 1
    assert IncidentStore(db, read_only=True).get("ref_after_close") is None


def test_read_only_store_on_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    store = IncidentStore(tmp_path / "nothing" / "i.db", read_only=True)
    assert store.get("ref_1") is None
    assert store.errors() == []
    assert store.recent() == []
    assert store.counts() == {"incidents": 0, "events": 0}
    assert not (tmp_path / "nothing").exists()
    with pytest.raises(ValueError):
        store.prune()


# -- concurrent writers -----------------------------------------------------------------------

CHILD = r"""
import sys, threading, time
from pathlib import Path
from control_plane._features.observability.events import ErrorEvent
from control_plane._features.observability.incident_store import IncidentStore
from control_plane._kernel.incidents import Incident

path, tag, threads, per = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
go = Path(sys.argv[5])
store = IncidentStore(path, batch_size=8, prune_interval=0)
while not go.exists():
    time.sleep(0.005)

def work(t):
    for i in range(per):
        ref = f"ref_{tag}_{t}_{i}"
        store.add_incident(Incident(ref, f"p.{tag}", ref, "unclassified", "s " + ref,
                                    ("Traceback\n" + ref + "\n") * 20, time.time()))
        store.add_event(ErrorEvent.rejection("unknown_pack", pack=f"p.{tag}", message=ref,
                                             request_id=ref))

workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
for w in workers: w.start()
for w in workers: w.join()
store.close()
print(store.written, store.dropped)
"""


@pytest.mark.system
def test_concurrent_writers_threads_and_processes_lose_and_corrupt_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    go = tmp_path / "go"
    threads, per = 3, 150
    IncidentStore(db).close()  # the file exists, as a running server would have made it
    children = [
        subprocess.Popen(
            tied(
                [sys.executable, "-c", CHILD, str(db), f"proc{n}", str(threads), str(per), str(go)]
            ),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    # In this process: two stores on the same file, each fed by several threads.
    stores = [IncidentStore(db, batch_size=8, prune_interval=0) for _ in range(2)]

    def work(tag: str, store: IncidentStore, t: int) -> None:
        for i in range(per):
            ref = f"ref_{tag}_{t}_{i}"
            store.add_incident(
                Incident(
                    ref,
                    f"p.{tag}",
                    ref,
                    "unclassified",
                    "s " + ref,
                    ("Traceback\n" + ref + "\n") * 20,
                    time.time(),
                )
            )
            store.add_event(
                ErrorEvent.rejection("unknown_pack", pack=f"p.{tag}", message=ref, request_id=ref)
            )

    workers = [
        threading.Thread(target=work, args=(f"local{s}", store, t))
        for s, store in enumerate(stores)
        for t in range(threads)
    ]
    go.touch()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for store in stores:
        store.close()
        assert store.dropped == 0
    for child in children:
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
        written, dropped = map(int, out.split())
        assert (written, dropped) == (2 * threads * per, 0)

    tags = ["proc0", "proc1", "local0", "local1"]
    reader = IncidentStore(db, read_only=True)
    assert reader.integrity_check() == "ok"
    total = len(tags) * threads * per
    assert reader.counts() == {"incidents": total, "events": total}
    assert sorted(reader.errors(by="pack")) == [(f"p.{tag}", threads * per) for tag in sorted(tags)]
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT reference_id, pack, request_id, summary, traceback FROM incidents")
    seen = set()
    for ref, pack, request_id, summary, traceback in rows:
        tag = ref.split("_")[1]
        assert (pack, request_id, summary) == (f"p.{tag}", ref, "s " + ref)
        assert traceback == ("Traceback\n" + ref + "\n") * 20
        seen.add(ref)
    expected = {f"ref_{tag}_{t}_{i}" for tag in tags for t in range(threads) for i in range(per)}
    assert seen == expected
    bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM events")]
    assert {b["request_id"] for b in bodies} == expected
    assert all(b["message"] == b["request_id"] for b in bodies)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


# -- stores that cannot be read ---------------------------------------------------------------


def _packctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "control_plane._features.cli.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )


def _newer_schema(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE incidents (reference_id TEXT PRIMARY KEY, tenant TEXT NOT NULL)")
    conn.execute("PRAGMA user_version = 9")
    conn.commit()
    conn.close()


@pytest.mark.system
@pytest.mark.parametrize("broken", ["not-sqlite", "directory", "newer-schema"])
def test_cli_on_a_store_it_cannot_read_says_why_and_exits_2(tmp_path: Path, broken: str) -> None:
    # Before: `packctl incident REF` / `packctl errors` on such a file ended in a Python
    # traceback (sqlite3.DatabaseError: file is not a database, ...).
    db = tmp_path / "incidents.db"
    if broken == "not-sqlite":
        db.write_bytes(b"this is not a database\n" * 100)
    elif broken == "directory":
        db.mkdir()
    else:
        _newer_schema(db)
    for argv in (["incident", "ref_0123456789abcdef"], ["errors", "--since", "all"]):
        done = _packctl(*argv, "--incident-db", str(db))
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        assert f"packctl {argv[0]}: cannot read the incident store {db}" in done.stderr
        if broken == "directory":
            assert "(it is a directory)" in done.stderr
        if broken == "newer-schema":
            assert "written by a newer version: schema 9" in done.stderr


@pytest.mark.system
def test_an_incident_in_the_journal_resolves_even_when_the_database_is_unreadable(
    tmp_path: Path,
) -> None:
    db = tmp_path / "incidents.db"
    db.write_bytes(b"garbage" * 1000)
    journal = IncidentJournal(db)  # what a server whose database broke still wrote
    journal.append(incident("ref_journaled0000001"))
    journal.close(remove=False)
    done = _packctl("incident", "ref_journaled0000001", "--incident-db", str(db))
    assert done.returncode == 0, done.stderr
    assert "reference_id: ref_journaled0000001" in done.stdout


@pytest.mark.system
def test_serve_refuses_a_store_of_a_newer_schema_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "incidents.db"
    _newer_schema(db)
    done = _packctl("serve", "--address", "127.0.0.1:0", "--incident-db", str(db))
    assert done.returncode == 2, done.stderr
    assert f"cannot open the incident store {db}" in done.stderr
    assert "written by a newer version (schema 9; this version knows up to 2)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.system
def test_a_hostile_reference_id_is_echoed_bounded(tmp_path: Path) -> None:
    ref = "ref_" + "a" * 100_000
    done = _packctl("incident", ref, "--incident-db", str(tmp_path / "none.db"))
    assert done.returncode == 1, done.stderr
    assert len(done.stderr) < 500 and "(100004 characters)" in done.stderr


def test_the_store_takes_events_in_the_emitters_thread(tmp_path: Path) -> None:
    """The store's add_event only enqueues (as add_incident does on the loop): no sink
    thread and queue in front of it, even when the emitter queues its other sinks."""
    store = IncidentStore(tmp_path / "i.db")
    taken: list[int] = []
    add_event = store.add_event

    def recording(event: ErrorEvent) -> None:
        taken.append(threading.get_ident())
        add_event(event)

    store.add_event = recording  # type: ignore[method-assign]
    obs = install(make_invoker(), events=ErrorEvents(queued=True), store=store)
    try:
        event = obs.events.emit_rejection("unknown_pack", pack="x.y")
        assert taken == [threading.get_ident()]
        assert store.flush()
        assert [e.event_id for e in store.events()] == [event.event_id]
    finally:
        obs.close()


def test_a_postgres_url_without_psycopg_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from control_plane._features.cli.cli import main
    from control_plane._features.observability.incident_postgres import PostgresDriverMissing

    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    url = "postgresql://packs:s3cret@127.0.0.1:9/incidents"
    with pytest.raises(PostgresDriverMissing, match=r"capability-packs\[postgres\]"):
        IncidentStore(url)
    assert main(["incident", "--incident-db", url, "ref_0123456789abcdef"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'capability-packs[postgres]'" in err and "s3cret" not in err


def test_a_store_url_is_shown_without_its_password() -> None:
    from control_plane._features.observability.incident_backend import is_url, shown_location

    assert shown_location("postgresql://packs:s3cret@db.internal:5432/x") == (
        "postgresql://packs:***@db.internal:5432/x"
    )
    assert shown_location("postgres://db.internal/x") == "postgres://db.internal/x"
    assert is_url("POSTGRESQL://h/x") and not is_url(Path("postgresql:/h/x"))
    assert not is_url("/var/lib/incidents.db")


def test_not_found_points_at_the_store_the_server_was_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 45 item 6: `packctl incident REF` looks in the default store; a server started
    with `--incident-db` kept REF elsewhere, and the answer says where."""
    from control_plane._features.cli.cli import main
    from control_plane._features.observability.observability import ObservabilityConfig, _open_store

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CAPABILITY_PACKS_INCIDENT_DB", raising=False)
    served = tmp_path / "served.db"
    store = _open_store(ObservabilityConfig(incident_db=served))
    assert store is not None
    store.add_incident(
        Incident("ref_00000000000000aa", "p", "r", "RuntimeError", "s", "t", time.time())
    )
    store.close()
    assert main(["incident", "ref_00000000000000aa"]) == 1
    err = capsys.readouterr().err
    assert f"packctl incident --incident-db {served} ref_00000000000000aa" in err, err
    # An id no store has: the answer names the store the last server here was started with.
    assert main(["incident", "ref_00000000000000bb"]) == 1
    err = capsys.readouterr().err
    assert f"the last server or worker started here used --incident-db {served}" in err, err


def test_incidents_of_writes_given_up_are_committed_once_the_database_is_back(
    tmp_path: Path,
) -> None:
    """The database refuses writes (as a PostgreSQL that is down does): each batch is
    retried, then dropped and counted, and the call is not held; the incidents stay in the
    journal and reach the database by themselves once it takes writes again."""
    store = IncidentStore(tmp_path / "i.db", linger=0)
    write = store.backend.write
    down = threading.Event()
    down.set()

    def flaky(incidents: Any, events: Any) -> None:
        if down.is_set():
            raise sqlite3.OperationalError("the database is down")
        write(incidents, events)

    store.backend.write = flaky  # type: ignore[method-assign]
    try:
        refs = [f"ref_{n:016x}" for n in range(3)]
        started = time.monotonic()
        for ref in refs:
            store.add_incident(Incident(ref, "p", "r", "RuntimeError", "s", "t", time.time()))
        assert time.monotonic() - started < 0.1  # handed over, never written in the call
        assert store.flush(30)
        assert store.dropped == 3 and store.written == 0
        assert all(store.get(ref) is not None for ref in refs)  # from the journal
        assert all(store.backend.read_incident(ref) is None for ref in refs)
        down.clear()
        deadline = time.monotonic() + 10
        while any(store.backend.read_incident(ref) is None for ref in refs):
            assert time.monotonic() < deadline, "journaled incidents never committed"
            time.sleep(0.1)
    finally:
        store.close()
    assert store.journal is not None and not store.journal.path.exists()  # all committed

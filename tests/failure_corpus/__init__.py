"""A live failure corpus: real libraries and tools failing against servers on 127.0.0.1.

* :mod:`failure_corpus.servers` -- the misbehaving servers (HTTP statuses, silent, reset,
  truncated, garbage, full backlog, TLS with certificates minted by trustme, SMTP, FTP,
  IMAP, POP3, gRPC, Unix sockets); :class:`~failure_corpus.servers.Endpoints` says where they are.
* :mod:`failure_corpus.cases` -- each case provokes one failure from one library or tool,
  with the set of codes that are right for it and a one-line reason.
* :mod:`failure_corpus.score` -- runs the cases, classifies each failure and prints
  correct / wrong specific / internal_error per class and in total::

      PYTHONPATH=.:tests python -m failure_corpus.score

Nothing here contacts anything but 127.0.0.1 (host-name failures use a name longer than
DNS allows, which the local resolver refuses without sending a query).
"""

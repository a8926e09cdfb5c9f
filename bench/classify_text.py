"""``python -m bench.classify_text``: the CPU one classification of a *distinct* exception
message costs, the cost a caller can drive since exception texts carry caller input.

Every message is new (a counter and random words are in it), so no cache of the engine
(``tokens``, ``_words_row``, ``_text``) can hide the cost. Three sizes: a short message
(~10 words), an 80-word one, and one as long as the engine reads (2,048 characters, its
cut). Each is raised as a library's exception (a class of another package, so the whole
engine reads it: facts, weighing, the vocabulary on every line) and classified with the
built-in classifiers; ``words_code`` alone is timed too. Figures are CPU time
(``time.thread_time``) per call, median and worst of ``--calls`` calls.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from control_plane._kernel.classify import classify
from control_plane._kernel.evidence import words_code
from control_plane._runtime.plugins import load_registry

#: The classifiers a control plane with no pack plugins has (built-ins included).
_CLASSIFIERS = tuple(load_registry(builtins=False, entry_points_=False).classifiers)

#: Plain words of error messages that are no phrase of the vocabulary on their own.
_WORDS = (
    "the",
    "request",
    "for",
    "item",
    "could",
    "while",
    "processing",
    "value",
    "field",
    "record",
    "user",
    "account",
    "service",
    "upstream",
    "server",
    "handler",
    "worker",
    "queue",
    "batch",
    "job",
    "step",
    "input",
    "output",
    "data",
    "page",
    "token",
    "cursor",
    "limit",
    "window",
    "region",
    "bucket",
    "object",
    "key",
    "path",
    "name",
    "version",
    "client",
    "session",
    "stream",
    "channel",
    "topic",
    "message",
    "payload",
    "header",
    "body",
    "status",
    "reply",
)


def _message(rng: random.Random, serial: int, words: int, cut: int | None = None) -> str:
    text = f"call {serial} failed: " + " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[:cut] if cut else text


def _time(fn: Callable[[str], object], texts: list[str]) -> tuple[float, float]:
    costs = []
    for text in texts:
        started = time.thread_time()
        fn(text)
        costs.append(time.thread_time() - started)
    return statistics.median(costs) * 1000, max(costs) * 1000


def _classify(text: str) -> object:
    exc = type("UpstreamError", (Exception,), {"__module__": "somelib.errors"})(text)
    return classify(exc, _CLASSIFIERS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="distinct messages per size")
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    serial = iter(range(10**9))
    sizes = {"10 words": (10, None), "80 words": (80, None), "2048 chars": (400, 2048)}
    print(f"CPU ms per distinct message ({args.calls} calls each): median / worst")
    print(f"{'message':<12} {'words_code':>20} {'classify':>20}")
    for label, (words, cut) in sizes.items():
        texts = [_message(rng, next(serial), words, cut) for _ in range(args.calls)]
        w_med, w_max = _time(words_code, texts)
        texts = [_message(rng, next(serial), words, cut) for _ in range(args.calls)]
        c_med, c_max = _time(_classify, texts)
        print(
            f"{label:<12} {w_med:>9.3f} / {w_max:>8.3f} {c_med:>9.3f} / {c_max:>8.3f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

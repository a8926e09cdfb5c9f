"""``copy_returned``'s fast paths for the common case (a small plain dict) leave every other
case on its general path: Mappings that are not dicts, non-objects, large and too-deep
results."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from control_plane._kernel import returned
from control_plane._kernel.pack import Result


class _View(Mapping[str, Any]):
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_a_mapping_that_is_not_a_dict_is_still_copied() -> None:
    for value in (_View({"a": (1, 2)}), Result(_View({"a": (1, 2)}), [])):
        copied = returned.copy_returned(value)
        assert copied.kind is None and copied.problem is None
        assert copied.output == {"a": [1, 2]} and type(copied.output) is dict


def test_what_is_not_a_mapping_is_named() -> None:
    assert returned.copy_returned([1]).kind == "list, not a JSON object"
    assert returned.copy_returned(Result([1], [])).kind == "a Result whose output is list"  # type: ignore[arg-type]


def test_small_large_and_deep_results_take_their_paths() -> None:
    small = {"a": [1, {"b": (2, 3)}], "c": "d"}
    copied = returned.copy_returned(small)
    assert copied.output == {"a": [1, {"b": [2, 3]}], "c": "d"}
    assert type(copied.output) is dict and copied.output is not small
    large = returned.copy_returned({"a": list(range(returned.CHUNK_VALUES + 1))}).output
    assert type(large) is returned.LargeResult
    assert returned.copy_returned({"x": _nested(253)}).problem is None
    deep = returned.copy_returned({"x": _nested(254)}).problem
    assert deep is not None and deep.endswith("nests deeper than 254 levels: not JSON")

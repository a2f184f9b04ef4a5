"""How a typed wire object maps to a plain msgpack map and back: field tables built once from annotations.

Messages and the payloads nested in them are frozen dataclasses. Each field's annotation decides what the
decoder accepts and builds: `int`/`str`/`bool`/`float`, a `StrEnum` (its value, checked against the members),
a `Payload` (a map, built recursively), `tuple[X, ...]` / `list[X]` (each item checked), `dict[str, Any]` and
`Any` (as sent), each optionally `| None`. A field's wire key is its name unless its metadata says otherwise
(`join.as` is `role` in Python, since `as` is a keyword). Nothing here knows msgpack: `protocol.codec` does.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar

from gamenight.protocol.errors import ProtocolError

P = TypeVar("P", bound="Payload")

Convert = Callable[[Any, int | None], Any]
"""Checks one decoded value (with the request id for the error) and returns it as the field's Python value."""


def wire_name(name: str) -> dict[str, str]:
    """Field metadata for a field whose wire key differs from its Python name."""
    return {"wire": name}


def omitted_when_empty() -> dict[str, bool]:
    """Field metadata for an optional field left out of the wire map while it is null or empty (saves bytes on
    messages sent on every move; a decoder fills the default back in)."""
    return {"omit": True}


@dataclass(frozen=True, slots=True)
class Payload:
    """Base of the typed maps nested inside messages (seat summaries, game descriptions, results, ...)."""

    def to_plain(self) -> dict[str, Any]:
        """This payload as a plain map with wire keys, nested payloads and enums made plain too (a field marked
        `omitted_when_empty` only when set)."""
        return {
            spec.wire: plain(getattr(self, spec.name))
            for spec in field_specs(type(self))
            if not spec.omit or not _empty(getattr(self, spec.name))
        }

    @classmethod
    def from_plain(cls: type[P], raw: Any, rid: int | None = None) -> P:
        """Build from a decoded map, checking every field; ProtocolError says which field is wrong."""
        return cls(**read_fields(cls, raw, rid, cls.__name__))


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How one field travels: Python name, wire key, whether it must be present, and how a value is checked."""

    name: str
    wire: str
    required: bool
    convert: Convert
    nested: bool  # holds payloads or tuples that encoding must make plain
    omit: bool = False  # left out of the wire map while null or empty (`omitted_when_empty`)


def _empty(value: Any) -> bool:
    """True for what an omittable field leaves out of the wire map: null or an empty list, tuple or map."""
    return value is None or value == [] or value == () or value == {}


def plain(value: Any) -> Any:
    """A value as msgpack takes it: payloads as maps, tuples and lists as lists (enums are already strings)."""
    if isinstance(value, Payload):
        return value.to_plain()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def read_fields(cls: type, raw: Any, rid: int | None, what: str) -> dict[str, Any]:
    """Check a decoded map against `cls`'s fields and return the keyword arguments to build it."""
    if not isinstance(raw, dict):
        raise ProtocolError(f"{what} must be a map", rid)
    values: dict[str, Any] = {}
    for spec in field_specs(cls):
        if spec.wire not in raw:
            if spec.required:
                raise ProtocolError(f"{what} needs field {spec.wire!r}", rid)
            continue
        try:
            values[spec.name] = spec.convert(raw[spec.wire], rid)
        except ProtocolError as exc:
            raise ProtocolError(f"field {spec.wire!r}: {exc}", rid) from None
    return values


_FIELD_SPECS: dict[type, tuple[FieldSpec, ...]] = {}


def field_specs(cls: type) -> tuple[FieldSpec, ...]:
    """The field table of a message or payload class, built from its annotations once."""
    known = _FIELD_SPECS.get(cls)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    specs = []
    for f in fields(cls):
        required = f.default is MISSING and f.default_factory is MISSING
        convert, nested = _converter(hints[f.name])
        wire = f.metadata.get("wire", f.name)
        specs.append(FieldSpec(f.name, wire, required, convert, nested, bool(f.metadata.get("omit", False))))
    _FIELD_SPECS[cls] = table = tuple(specs)
    return table


def _converter(annotation: Any) -> tuple[Convert, bool]:
    """The check for values of `annotation`, and whether its values need making plain to be sent."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        inner, nested = _converter(args[0])
        return (lambda value, rid: None if value is None else inner(value, rid)), nested
    origin = typing.get_origin(annotation) or annotation
    if origin in (tuple, list):
        return _sequence(origin, typing.get_args(annotation))
    if annotation is Any:
        return _anything, False
    if origin is dict:
        return _exactly(dict, "map"), False
    if isinstance(origin, type) and issubclass(origin, Payload):
        return (lambda value, rid: origin.from_plain(value, rid)), True
    if isinstance(origin, type) and issubclass(origin, enum.Enum):
        return _member(origin), False
    return _scalar(origin), False


def _sequence(origin: type, args: tuple[Any, ...]) -> tuple[Convert, bool]:
    """A list or tuple whose items are each checked (tuple[X, ...] and list[X]); built as `origin`."""
    item = args[0] if args else Any
    if item is Any:
        return (lambda value, rid: origin(_array(value, rid))), origin is tuple
    inner, _ = _converter(item)
    return (lambda value, rid: origin(inner(v, rid) for v in _array(value, rid))), True


def _array(value: Any, rid: int | None) -> list[Any] | tuple[Any, ...]:
    """`value` if it is an array, else ProtocolError."""
    if value is None:
        raise ProtocolError("may not be null", rid)
    if not isinstance(value, (list, tuple)):
        raise ProtocolError("must be a list", rid)
    return value


def _anything(value: Any, rid: int | None) -> Any:
    """Accept any value but null (a field that may be null says so with `| None`)."""
    if value is None:
        raise ProtocolError("may not be null", rid)
    return value


def _exactly(kind: type, name: str) -> Convert:
    """Accept any instance of `kind` as it is."""

    def convert(value: Any, rid: int | None) -> Any:
        if value is None:
            raise ProtocolError("may not be null", rid)
        if not isinstance(value, kind):
            raise ProtocolError(f"must be a {name}", rid)
        return value

    return convert


def _member(kind: type[enum.Enum]) -> Convert:
    """Accept one of an enum's values (as sent: a string), giving the member."""
    allowed = ", ".join(str(m.value) for m in kind)

    def convert(value: Any, rid: int | None) -> Any:
        try:
            return kind(value)
        except ValueError:
            raise ProtocolError(f"must be one of: {allowed}", rid) from None

    return convert


_SCALARS: dict[type, tuple[type, ...]] = {int: (int,), str: (str,), bool: (bool,), float: (float, int)}


def _scalar(kind: type) -> Convert:
    """Accept a plain value of `kind` (a bool is never taken for an int)."""
    accepted = _SCALARS[kind]

    def convert(value: Any, rid: int | None) -> Any:
        if value is None:
            raise ProtocolError("may not be null", rid)
        if isinstance(value, bool) and bool not in accepted:
            raise ProtocolError(f"must be {kind.__name__}, not bool", rid)
        if not isinstance(value, accepted):
            raise ProtocolError(f"must be {kind.__name__}", rid)
        return value

    return convert

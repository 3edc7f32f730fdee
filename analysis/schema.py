"""The one table of the trace events the analysis reads, and their fields.

Every event the model understands is here with its fields in print-fmt
order and their types.  The field parsers (one compiled regex per event,
generated from this table), the boot test's field-by-field comparison
(tests/boot/bootcheck.py) and the test against the kernel's own format
files (analysis/tests/test_schema.py: ``tracepoints/formats/*.format``, a
drifted field fails it) all read this table, so adding a field to an event
is one entry here plus its format file.

A parsed event is a ``namedtuple`` named after the event, with one typed
attribute per field (``None`` for an optional field the event lacks):
consumers read fields by name, so a new field is carried without changing
them.
"""

from __future__ import annotations

import re
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from analysis.model import CallPath, EventName, ExitReason

#: How each printf conversion is matched and converted.
_CONVERSIONS: Mapping[str, tuple[str, Callable[[str], Any]]] = {
    "%s": (r"\S*", str),
    "%u": (r"\d+", int),
    "%d": (r"-?\d+", int),
    "%llu": (r"\d+", int),
    "%pS": (r"\S+", str),
}

#: Fields whose text is one of a few names: the enum they convert to.
_ENUMS: Mapping[str, Mapping[str, Any]] = {
    "path": {p.value: p for p in CallPath},
    "reason": {r.value: r for r in ExitReason},
}


@dataclass(frozen=True)
class Field:
    """One field of an event: its name, C type as the format file declares
    it, and printf conversion as its print fmt prints it.

    ``optional``: absent in captures from kernels before the field
    (``has_exit``); ``measured``: a value the kernel measures
    (``duration_ns``), which no model of the series predicts."""

    name: str
    ctype: str
    printf: str
    optional: bool = False
    measured: bool = False
    #: The values it can take, when narrower than its conversion's (a regex).
    pattern: Optional[str] = None

    @property
    def regex(self) -> str:
        return self.pattern or _CONVERSIONS[self.printf][0]

    def convert(self, text: str) -> Any:
        enum = _ENUMS.get(self.name)
        if enum is not None:
            return enum[text]  # KeyError: not one of the names
        return _CONVERSIONS[self.printf][1](text)


@dataclass(frozen=True)
class EventSchema:
    """One event: its name, trace system, and fields in print-fmt order.
    ``format_file``: its format is kept in tracepoints/formats/."""

    name: str
    system: str
    fields: tuple[Field, ...]
    format_file: bool = False

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def print_fmt(self) -> str:
        """The format string of the event's ``print fmt:`` line."""
        return " ".join(f"{f.name}={f.printf}" for f in self.fields)


_PAIR = (
    Field("path", "__data_loc char[]", "%s"),
    Field("origin", "__data_loc char[]", "%s"),
    Field("idx", "unsigned int", "%u"),
    Field("prio", "int", "%d"),
    Field("func", "__data_loc char[]", "%s"),
)
_REASON = Field("reason", "__data_loc char[]", "%s")
_DURATION = Field("duration_ns", "u64", "%llu", measured=True)

#: The events with fields the analysis parses, by name.  The stock events
#: (initcall:*, module:*) are the kernel's own; initexit:* is the series'.
SCHEMA: Mapping[str, EventSchema] = {
    s.name: s
    for s in (
        EventSchema("initcall_level", "initcall", (Field("level", "const char *", "%s"),)),
        EventSchema("initcall_band", "initcall",
                    (Field("band", "__data_loc char[]", "%s"), Field("prio", "int", "%d"))),
        EventSchema("initcall_start", "initcall", (Field("func", "initcall_t", "%pS"),)),
        EventSchema("initcall_finish", "initcall",
                    (Field("func", "initcall_t", "%pS"), Field("ret", "int", "%d"))),
        EventSchema("initexit_init_start", "initexit",
                    _PAIR + (Field("has_exit", "unsigned int", "%u", optional=True, pattern="[01]"),), format_file=True),
        EventSchema("initexit_init_finish", "initexit",
                    _PAIR + (Field("ret", "int", "%d"), _DURATION), format_file=True),
        EventSchema("initexit_exit_start", "initexit", _PAIR + (_REASON,), format_file=True),
        EventSchema("initexit_exit_finish", "initexit", _PAIR + (_REASON, _DURATION), format_file=True),
        EventSchema("initexit_unwind", "initexit",
                    _PAIR + (Field("failed_idx", "unsigned int", "%u"), Field("failed_prio", "int", "%d"),
                             Field("failed_func", "__data_loc char[]", "%s"), Field("error", "int", "%d")),
                    format_file=True),
    )
}

#: The module events print their name first, then flags: only the name is read.
MODULE_NAME_RE = re.compile(r"(\S+)")
"""module_load / module_free: the name comes first.  Example: ``ie_demo OE``"""


def _regex(fields: tuple[Field, ...]) -> re.Pattern[str]:
    parts = []
    for i, f in enumerate(fields):
        sep = " " if i else ""
        body = f"{sep}{f.name}=({f.regex})"
        parts.append(f"(?:{body})?" if f.optional else body)
    return re.compile("".join(parts) + r"\s*$")


class FieldParser:
    """Parses one event's field text into its namedtuple, or None when the
    text is not in the documented format (:meth:`diagnose` says why).

    Large captures repeat the same field text from one module load to the
    next, except a trailing measured field (``duration_ns``): the text
    before it is looked up in a memo (a dict lookup costs a tenth of the
    regex match it saves) and the measured value converted on its own.
    The memo is cleared at ``MEMO_MAX`` entries so a capture with no
    repeats does not grow it without end."""

    MEMO_MAX = 1 << 16

    def __init__(self, schema: EventSchema) -> None:
        self.schema = schema
        self.type = namedtuple(schema.name, schema.field_names)  # type: ignore[misc]
        fields = schema.fields
        self._tail: Optional[Field] = fields[-1] if fields[-1].measured else None
        self._head_fields = fields[:-1] if self._tail is not None else fields
        self._rx = _regex(self._head_fields)
        self._sep = f" {self._tail.name}=" if self._tail is not None else ""
        self.parse: Callable[[str], Any] = self._parser()

    def _parse_head(self, text: str) -> Optional[tuple[Any, ...]]:
        m = self._rx.match(text)
        if m is None:
            return None
        try:
            return tuple(None if v is None else f.convert(v)
                         for f, v in zip(self._head_fields, m.groups()))
        except KeyError:
            return None


    def __call__(self, text: str) -> Any:
        """The event's record (a namedtuple made from the schema, so ``Any``
        to the type checker), or None."""
        return self.parse(text)

    def _parser(self) -> Callable[[str], Any]:
        # The closure the span builder calls once per event: locals only,
        # and for an event with no measured field the memo holds the record
        # itself (records are immutable), so a repeat is one dict lookup.
        memo: dict[str, Any] = {}
        get = memo.get
        limit = self.MEMO_MAX
        head_of = self._parse_head
        make = self.type._make
        if self._tail is None:
            def parse(text: str) -> Any:
                rec = get(text)
                if rec is None:
                    if len(memo) >= limit:
                        memo.clear()
                    head = head_of(text)
                    rec = memo[text] = make(head) if head is not None else False
                return rec or None
            return parse
        sep_text = self._sep

        def parse_measured(text: str) -> Any:
            text, sep, tail = text.rstrip().rpartition(sep_text)
            if not sep or not (tail.isascii() and tail.isdigit()):
                return None
            head: Any = get(text)
            if head is None:
                if len(memo) >= limit:
                    memo.clear()
                head = memo[text] = head_of(text) or False
            return make(head + (int(tail),)) if head else None
        return parse_measured

    def diagnose(self, text: str) -> str:
        """Why ``text`` does not parse: the first missing, unexpected or
        badly typed field, named."""
        got = loose_fields(text)
        for f in self.schema.fields:
            if f.name not in got:
                if not f.optional:
                    return f"{f.name}= missing"
                continue
            try:
                if not re.fullmatch(f.regex, got[f.name]):
                    raise KeyError(f.name)
                f.convert(got[f.name])
            except KeyError:
                return f"{f.name}={got[f.name]} is not a {f.printf} value" + (
                    f" ({'/'.join(_ENUMS[f.name])})" if f.name in _ENUMS else "")
        extra = [k for k in got if k not in self.schema.field_names]
        if extra:
            return f"unexpected field(s) {', '.join(extra)}"
        return "fields out of the documented order: " + self.schema.print_fmt()


def field_parsers() -> dict[EventName, FieldParser]:
    """A fresh parser (with its own memo) per modelled event with fields."""
    return {EventName(name): FieldParser(s) for name, s in SCHEMA.items()}


# -- the kernel's format files ---------------------------------------------------

_FORMAT_FIELD_RE = re.compile(r"^\tfield:(.+?) (\w+)(\[\d*\])?;\toffset:\d+;\tsize:(\d+);\tsigned:(\d);$")
"""One field line of a tracefs format file.

Example (tabs between the parts)::

    \tfield:__data_loc char[] path;\toffset:8;\tsize:4;\tsigned:0;
"""

_PRINT_FMT_RE = re.compile(r'^print fmt: "([^"]*)"')
"""The print fmt line.  Example: ``print fmt: "path=%s idx=%u", __get_str(path), REC->idx``"""


@dataclass(frozen=True)
class FormatFile:
    """What a tracefs format file declares: name, fields (C type, name)
    after the common ones, and the print fmt string."""

    name: str
    fields: tuple[tuple[str, str], ...]
    print_fmt: str


def read_format(text: str) -> FormatFile:
    name = ""
    fields: list[tuple[str, str]] = []
    fmt = ""
    for line in text.splitlines():
        if line.startswith("name: "):
            name = line[len("name: "):].strip()
        elif (m := _FORMAT_FIELD_RE.match(line)) is not None:
            ctype, fname = m.group(1), m.group(2)
            if m.group(3):
                ctype += m.group(3)
            if not fname.startswith("common_"):
                fields.append((ctype, fname))
        elif (p := _PRINT_FMT_RE.match(line)) is not None:
            fmt = p.group(1)
    return FormatFile(name, tuple(fields), fmt)


def format_drift(schema: EventSchema, fmt: FormatFile) -> list[str]:
    """How a format file differs from the schema's entry: each field by
    name and type, then the print fmt; empty when they agree."""
    problems = []
    want = [(f.ctype, f.name) for f in schema.fields]
    got = list(fmt.fields)
    if fmt.name != schema.name:
        problems.append(f"format file names event {fmt.name!r}, the schema {schema.name!r}")
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            ws = f"{w[0]} {w[1]}" if w else "nothing"
            gs = f"{g[0]} {g[1]}" if g else "nothing"
            problems.append(f"{schema.name} field {i}: the schema has {ws}, the format file {gs}")
    if fmt.print_fmt != schema.print_fmt():
        problems.append(f"{schema.name} print fmt: the schema prints {schema.print_fmt()!r}, "
                        f"the format file {fmt.print_fmt!r}")
    return problems


# -- dmesg ------------------------------------------------------------------------
# parse.py keeps a dmesg initcall_debug line as an event whose text is
# ``func=... [module] @ pid tail`` (calling) or ``func=... ret=N usecs=N tail``
# (returned); these read it back.

DMESG_CALLING_INFO_RE = re.compile(r"func=(\S+)(?: \[(\S+)\])? @ (\d+)(.*)$")
"""A dmesg calling line as parse.py stores it.

Example: ``func=foo_init+0x0/0x30 [foo] @ 123 prio=0 origin=foo``
"""

DMESG_RETURNED_INFO_RE = re.compile(r"func=(\S+)(?: \[(\S+)\])? ret=(-?\d+) usecs=(\d+)(.*)$")
"""A dmesg returned line as parse.py stores it.

Example: ``func=foo_init+0x0/0x30 [foo] ret=0 usecs=12 prio=0 origin=foo``
"""

PRIO_RE = re.compile(r"\bprio=(-?\d+)\b")
"""A band's ``prio=`` anywhere in a patched initcall_debug line (not
``prio=early``/``prio=console``, which have none).  Example: ``prio=-3000``"""

ORIGIN_RE = re.compile(r"\b(?:origin|modname)=(\S+)")
"""The KBUILD_MODNAME a patched initcall_debug line names: ``modname=`` (the
series since it prints from the tracepoint probes), ``origin=`` before.
Example: ``modname=signal``"""


def printed(value: Any) -> str:
    """A parsed field value as the event printed it (``boot``, ``-12``)."""
    if value is None:
        return "None"
    return str(getattr(value, "value", value))


def loose_fields(text: str) -> dict[str, str]:
    """The ``key=value`` words of an event's text, for showing what an event
    that is not in the documented format holds (never to read a valid one:
    that is :class:`FieldParser`'s)."""
    return dict(tok.partition("=")[::2] for tok in text.split() if "=" in tok)

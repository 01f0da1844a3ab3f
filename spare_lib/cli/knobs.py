"""The command line's flags, generated from the knob registry (:mod:`spare_lib.registry.knobs`).

:func:`add_knob_args` gives a parser one flag per knob: ``--name-with-dashes`` (or the knob's own
``flag``), a converter that validates with the knob's range (so a bad value is argparse's
one-line error naming the flag and the range), the help with the unit and the registry's default,
and the aliases the knob declares (``--restart-min`` beside ``--restart-s``, mutually exclusive),
and its old spellings (``old_flags``: ``--steps`` of ``spare plan`` for ``--plan-steps``).
Every flag's argparse default is None, so that a command can tell "given" from "default";
:func:`knob_values` then fills in the registry defaults and converts aliases to the knob's unit.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from typing import Any

from spare_lib.registry.knobs import KNOBS, Knob, knob


def _number(text: str, kind: str) -> float:
    v = float(text)
    if kind == "int":
        if not (math.isfinite(v) and v.is_integer()):
            raise ValueError(text)
        return int(v)
    return v


def _converter(k: Knob, flag: str, factor: float = 1.0):  # noqa: ANN202 - argparse type
    def conv(text: str) -> Any:
        if k.kind == "choice":
            return k.check(text, name=flag)
        if k.kind == "str":
            if k.allow_none and text.strip().lower() == "none":
                return None
            return k.check(text, name=flag)
        if k.allow_none and text.lower() in ("none", "default"):
            return None
        try:
            v = _number(text, "float" if factor != 1.0 else k.kind)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {_what(k, factor)}, got "
                                             f"{text!r}") from None
        try:
            if factor != 1.0:
                v = v * factor
                if k.kind == "int" and float(v).is_integer():
                    v = int(v)
            return k.check(v, name=flag)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {_what(k, factor)}, got "
                                             f"{text!r}") from None
        except OverflowError:
            raise argparse.ArgumentTypeError(f"{flag} must be {_what(k, factor)}, got "
                                             f"{text!r}") from None
    conv.__name__ = k.kind
    return conv


def _what(k: Knob, factor: float = 1.0) -> str:
    """'in [0, 1]' / 'an integer in [1, inf)' in the flag's own unit."""
    if factor == 1.0:
        text = k.range_text()
        return ("an " + text) if k.kind == "int" else ("in " + text)
    scaled = Knob(k.name, k.unit, None, k.help, k.group, kind="float",
                  lo=None if k.lo is None else k.lo / factor,
                  hi=None if k.hi is None else k.hi / factor, lo_open=k.lo_open,
                  hi_open=k.hi_open, allow_inf=k.allow_inf)
    return "in " + scaled.range_text()


def _default_text(k: Knob, factor: float = 1.0, unit: str | None = None) -> str:
    if k.default is None:
        return "derived"
    if k.kind in ("int", "float") and not isinstance(k.default, bool):
        v = k.default / factor
        shown = f"{v:g}" if abs(v) < 1e7 else f"{v:.3g}"
        u = unit if unit is not None else k.unit
        return f"{shown} {u}".strip() if u not in ("1", "") else shown
    return str(k.default)


def add_knob_args(parser: Any, names: Iterable[str], *, title: str | None = None) -> None:
    """Add one flag per knob of ``names`` (and its aliases) to ``parser`` (or a new group)."""
    g = parser.add_argument_group(title) if title else parser
    for name in names:
        k = knob(name)
        if k.kind == "bool":
            if k.default:  # on by default: the flag turns it off
                g.add_argument("--no-" + k.cli_flag[2:], dest=name, action="store_const",
                               const=False, default=None, help=f"turn off: {k.help}")
            else:
                g.add_argument(k.cli_flag, dest=name, action="store_const", const=True,
                               default=None, help=f"{k.help} (default: off)")
            continue
        unit = "" if k.unit in ("", "1") else f", {k.unit}"
        help_text = f"{k.help}{unit} (default {_default_text(k)})".replace("%", "%%")
        kw: dict[str, Any] = {"dest": name, "default": None, "type": _converter(k, k.cli_flag),
                              "help": help_text}
        if k.kind == "choice":
            kw["choices"] = k.choices
            kw.pop("type")
        if not k.aliases and not k.old_flags:
            g.add_argument(k.cli_flag, **kw)
            continue
        ex = g.add_mutually_exclusive_group()
        ex.add_argument(k.cli_flag, **kw)
        add_old_flags(ex, k, choices=kw.get("choices"))
        for a in k.aliases:
            ex.add_argument(a.flag, dest=f"{name}__{a.unit}", default=None,
                            type=_converter(k, a.flag, a.factor),
                            help=f"{name} in {a.unit} (default {_default_text(k, a.factor, a.unit)})")


def old_dest(name: str, flag: str) -> str:
    """The argparse dest of an old spelling ``flag`` of knob ``name``."""
    return f"{name}__old_{flag.lstrip('-').replace('-', '_')}"


def add_old_flags(parser: Any, k: Knob, converter_of: Any = None, *,
                  choices: tuple[str, ...] | None = None) -> None:
    """Add the knob's old spellings (:attr:`Knob.old_flags`) to ``parser`` (the mutually
    exclusive group of its flag): the same values in the same unit. ``converter_of(flag)``
    gives the converter of one spelling (default: the registry's, naming that flag)."""
    for f in k.old_flags:
        kw: dict[str, Any] = {"dest": old_dest(k.name, f), "default": None,
                              "metavar": k.name.upper(),
                              "help": f"old spelling of {k.cli_flag} (kept for old scripts)"}
        if choices:
            kw["choices"] = choices
        else:
            kw["type"] = converter_of(f) if converter_of is not None else _converter(k, f)
        parser.add_argument(f, **kw)


def _given_old(args: argparse.Namespace, name: str) -> str | None:
    """The old spelling of the knob the user typed, if any."""
    for f in KNOBS[name].old_flags:
        if getattr(args, old_dest(name, f), None) is not None:
            return f
    return None


def knob_given(args: argparse.Namespace, name: str) -> bool:
    """Whether the user gave the knob's flag, one of its aliases or an old spelling."""
    if getattr(args, name, None) is not None or _given_old(args, name) is not None:
        return True
    return any(getattr(args, f"{name}__{a.unit}", None) is not None for a in KNOBS[name].aliases)


def knob_value(args: argparse.Namespace, name: str) -> Any:
    """The knob's value in its own unit: the flag, else an alias (converted), else the default."""
    v = getattr(args, name, None)
    if v is not None:
        return v
    old = _given_old(args, name)
    if old is not None:
        return getattr(args, old_dest(name, old))
    for a in KNOBS[name].aliases:
        av = getattr(args, f"{name}__{a.unit}", None)
        if av is not None:
            return av
    return KNOBS[name].default


def knob_values(args: argparse.Namespace, names: Iterable[str], *,
                given_only: bool = False) -> dict[str, Any]:
    """``{name: value}`` for ``names`` (only the given ones with ``given_only``)."""
    return {n: knob_value(args, n) for n in names if not given_only or knob_given(args, n)}


def given_flag(args: argparse.Namespace, name: str) -> str:
    """The flag the user typed for the knob (its alias if that is what was given)."""
    k = KNOBS[name]
    for a in k.aliases:
        if getattr(args, f"{name}__{a.unit}", None) is not None:
            return a.flag
    old = _given_old(args, name)
    if old is not None:
        return old
    if k.kind == "bool" and k.default:
        return "--no-" + k.cli_flag[2:]
    return k.cli_flag


__all__ = ["add_knob_args", "add_old_flags", "given_flag", "knob_given", "knob_value",
           "knob_values", "old_dest"]

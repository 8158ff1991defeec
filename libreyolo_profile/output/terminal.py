"""Human-readable output: rich tables on stdout, one-line notes on stderr, numbers for people.
Every string from a trace passes through textsafe first, so it can neither act on the terminal nor
parse as rich markup."""

from __future__ import annotations

import sys

from libreyolo_profile.output.textsafe import safe_line


def stdout_console():
    from rich.console import Console

    return Console(soft_wrap=False)


def stderr_note(text: str) -> None:
    """One diagnostic line on stderr; a name or path in it cannot act on the terminal or add lines."""
    sys.stderr.write(safe_line(text.rstrip()) + "\n")


def fmt(value, digits: int = 2, unit: str | None = None) -> str:
    """A value for a human: numbers rounded, None as a dash, strings from traces made terminal-safe.
    A `count` (the metric catalog's unit, or a count column) prints as a whole number, decided by the
    unit and never by the value; any other number with `digits` fixed decimals (none from 1,000 up)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "count" and isinstance(value, (int, float)):
        return fmt_count(value)
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    return safe_line(value)


def fmt_sig(value, significant: int = 3, max_decimals: int = 6, trim: bool = False) -> str:
    """A quantity that spans decades (ms above a roof, a share of a peak) in plain notation, never
    `1.73e+03` or `6.66e-06`: `significant` digits, whole from 10^(significant−1) up with thousands
    separators, at most `max_decimals` decimals below (a smaller non-zero value prints as its bound).
    trim: no zeros after the point (`4`, not `4.00`: µs a trace wrote whole)."""
    import math

    if value is None:
        return "—"
    if not math.isfinite(value):
        return str(value)
    rounded = float(f"{value:.{significant}g}")  # 99.96 is 100 at three digits: whole, not 100.0
    if rounded == 0 or abs(rounded) >= 10 ** (significant - 1):
        return f"{value:,.0f}"
    decimals = min(significant - 1 - math.floor(math.log10(abs(rounded))), max_decimals)
    shown = f"{value:.{decimals}f}"
    if float(shown) == 0:  # below what max_decimals shows: say its bound rather than a false 0
        return ("-" if value < 0 else "") + "<" + f"{10**-max_decimals:.{max_decimals}f}"
    return shown.rstrip("0").rstrip(".") if trim and "." in shown else shown


def fmt_count(value) -> str:
    """A count, or a count per step: whole. A per-step mean under 10 that is not whole keeps one
    decimal, so 0.4 launches per step does not read as none."""
    if value is None:
        return "—"
    # 9.96 rounds to one decimal as 10.0: from there it is a whole count like any other
    if isinstance(value, float) and not value.is_integer() and abs(round(value, 1)) < 10:
        return f"{value:.1f}"
    return f"{round(value):,}"


def fmt_metric(name: str, value, digits: int = 2) -> str:
    """A catalogued metric's value, formatted by its unit."""
    from libreyolo_profile.metric_catalog import METRICS

    return fmt(value, digits, unit=METRICS.get(name, ("",))[0])


# a column whose header names one of these (alone, or per something: "calls/step") counts things
COUNT_WORDS = {"calls", "kernels", "launches", "ops", "count", "steps", "trials", "n", "images"}


def _first_word(header: str) -> str:
    return header.strip().lower().split("/")[0].split(" ")[0]


def is_count_column(header: str) -> bool:
    return _first_word(header) in COUNT_WORDS


def close_match_hint(word: str, choices) -> str:
    """' (did you mean X?)' for the nearest of `choices` to a mistyped `word`, else ''."""
    import difflib

    found = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {found[0]}?)" if found else ""


def table(
    title: str | None,
    columns: list[tuple[str, str]],
    rows: list[list],
    width: int | None = None,
    optional: tuple[str, ...] = (),
):
    """A rich table; columns are (header, justify). A right-justified column is a number: neither it
    nor a word of its header is ever cut. A count column (calls/step, kernels, ...) prints whole
    numbers. A name column (kernel, op) is shortened in the middle to fit `width` (the terminal's, by
    default); where even that cannot fit, a phase list, a Δ % or a 2·SE is left out, then the `optional`
    headers in their order until every number fits whole (--json keeps everything)."""
    from rich.markup import escape
    from rich.table import Table

    counts = [is_count_column(header) for header, _ in columns]
    # names come from traces: `[/x]` in a kernel name must print, not parse as rich markup, and an
    # escape sequence in it must show as text, not act on the terminal
    shown = [
        [
            safe_line(v)
            if isinstance(v, str)
            else v
            if hasattr(v, "__rich__") or hasattr(v, "__rich_console__")
            else fmt(v, unit="count" if counts[i] else None)
            for i, v in enumerate(row)
        ]
        for row in rows
    ]
    console = stdout_console()
    width = width if width is not None else console.width
    columns, shown, dropped = _drop_to_fit(columns, shown, width)
    columns, shown, dropped = _drop_listed(columns, shown, width, optional, dropped)
    name_column, _ = _fit_names(columns, shown, width)
    widths = _narrow_widths(columns, shown, width, name_column, console)
    hidden = f"({', '.join(dropped)} hidden: narrow terminal; see --json)" if dropped else None
    t = Table(
        header_style="bold",
        show_edge=False,
        pad_edge=False,
    )
    for i, (header, justify) in enumerate(columns):
        elided = header in ELIDED_HEADERS
        t.add_column(
            escape(safe_line(header)),
            justify=justify,
            overflow="ellipsis" if elided else "fold",
            no_wrap=i == name_column or elided,
            width=widths[i] if widths else None,
        )
    for row in shown:
        t.add_row(*[escape(v) if isinstance(v, str) else v for v in row])
    from rich.console import Group
    from rich.text import Text

    # the title on its own line, wrapped at the terminal's width between words, not at the table's; what
    # a narrow terminal left out is said under the table, so the title stays one line where it can
    parts = ([Text(safe_line(title), style="italic")] if title is not None else []) + [t]
    parts += [Text(hidden, style="dim")] if hidden else []
    return parts[0] if len(parts) == 1 else Group(*parts)


def _natural_cells(columns, rows, i: int, console) -> int:
    texts = [columns[i][0]] + [v for v in (row[i] for row in rows) if isinstance(v, str)]
    others = [console.measure(v).maximum for v in (row[i] for row in rows) if not isinstance(v, str)]
    return max([len(text) for text in texts] + others)


def _narrow_widths(columns, rows, width: int, name_column: int | None, console) -> list[int] | None:
    """Fixed column widths where the table would not fit `width` as it is (None where it fits): every
    column at the fewest cells it needs (a number whole, a header broken only between words, a name
    at its fitted width), then what is left given back to the columns that wanted more, numbers
    first. rich left to itself narrows the widest column, a name or a number alike, and crops the rest."""
    separators = 3 * (len(columns) - 1)  # rich puts " │ " between columns
    natural = [_natural_cells(columns, rows, i, console) for i in range(len(columns))]
    if not rows or sum(natural) + separators <= width:
        return None
    widths = [
        natural[i] if i == name_column else min(natural[i], _min_cells(columns, rows, i)) for i in range(len(columns))
    ]
    spare = width - sum(widths) - separators
    for i in sorted(range(len(columns)), key=lambda i: columns[i][1] != "right"):
        grow = max(0, min(spare, natural[i] - widths[i]))
        widths[i] += grow
        spare -= grow
    return widths


# a column of names (kernels, ops): elided in the middle to fit the terminal, never folded onto lines
NAME_WORDS = {"kernel", "op", "name", "metric", "module"}
NAME_FLOOR = 16
NAME_LAST_RESORT = 8
NAME_WANTED = 32  # fewer cells than this (or than the longest name) for names: optional columns go first
# a list of phases beside a name: the first thing to leave out of a narrow terminal
OPTIONAL_WORDS = {"phase", "phases"}
# a change's percentage and its noise threshold beside the change itself (compare): --json keeps them
OPTIONAL_HEADERS = {"Δ %", "2·SE", "2·SE ms"}
# text cut at its end with "…" where narrow, never folded: a shape list folded at its spaces took a line per
# dimension (13 lines a row at 80 columns); its first dimensions say which call it is, --json keeps it whole
ELIDED_HEADERS = {"shapes"}  # cut like a name, to NAME_FLOOR cells at fewest


def _is_optional(header: str) -> bool:
    return _first_word(header) in OPTIONAL_WORDS or header in OPTIONAL_HEADERS


TEXT_CAP = 13  # a text column other than the name folds at this width (a category name fits)


def _min_cells(columns: list[tuple[str, str]], rows: list[list], i: int) -> int:
    """The fewest terminal cells column `i` needs: a number whole, text at its longest word (capped)."""
    values = [row[i] for row in rows]
    header_word = max(len(word) for word in columns[i][0].split() or [""])
    if columns[i][1] == "right":
        return max([header_word] + [len(v) for v in values if isinstance(v, str)])
    if columns[i][0] in ELIDED_HEADERS or i == _name_column(columns):  # cut to fit, never below the floor
        longest = max((len(v) for v in values if isinstance(v, str)), default=0)
        return max(header_word, min(NAME_FLOOR, longest))
    words = [w for v in values for w in (v.split() if isinstance(v, str) else ["x" * 20])]
    longest = max((len(w) for w in words), default=0)
    if _is_optional(columns[i][0]):  # shown whole or not at all
        return max(header_word, longest)
    # up to TEXT_CAP cells of the whole text, not its longest word alone: at a word's width a list of reasons
    # ("delay, slow call, short") took a line per word while the name beside it kept its cells
    longest_text = max([longest] + [len(v) for v in values if isinstance(v, str)])
    return max(header_word, min(TEXT_CAP, longest_text))


def _others(columns: list[tuple[str, str]], rows: list[list], name: int) -> int:
    """Cells every column but the name one needs, rich's " │ " between columns included."""
    return sum(_min_cells(columns, rows, i) for i in range(len(columns)) if i != name) + 3 * (len(columns) - 1)


def _name_column(columns: list[tuple[str, str]]) -> int | None:
    return next((i for i, (header, _) in enumerate(columns) if _first_word(header) in NAME_WORDS), None)


def _drop_to_fit(columns, rows, width: int):
    """(columns, rows, dropped headers): the optional columns left out when the name column would
    get fewer than NAME_WANTED cells (or than its longest name)."""
    name = _name_column(columns)
    if name is None or not rows:
        return columns, rows, []
    longest = max((len(row[name]) for row in rows if isinstance(row[name], str)), default=0)
    if width - _others(columns, rows, name) >= min(longest, NAME_WANTED):
        return columns, rows, []
    keep = [i for i, (header, _) in enumerate(columns) if not _is_optional(header)]
    dropped = [header for i, (header, _) in enumerate(columns) if i not in keep]
    return [columns[i] for i in keep], [[row[i] for i in keep] for row in rows], dropped


def _drop_listed(columns, rows, width: int, optional: tuple[str, ...], dropped: list[str]):
    """The `optional` headers left out, in order, while the columns' fewest cells pass `width`."""
    for header in optional:
        if not rows or sum(_min_cells(columns, rows, i) for i in range(len(columns))) + 3 * (len(columns) - 1) <= width:
            break
        if header in (h for h, _ in columns):
            at = [h for h, _ in columns].index(header)
            columns = columns[:at] + columns[at + 1 :]
            rows = [row[:at] + row[at + 1 :] for row in rows]
            dropped = dropped + [header]
    return columns, rows, dropped


def _fit_names(columns: list[tuple[str, str]], rows: list[list], width: int) -> tuple[int | None, int | None]:
    """Shorten the name column (in place) so the row fits `width` terminal cells; (its index, its
    width), or (None, None) without one."""
    column = _name_column(columns)
    if column is None or not rows:
        return None, None
    # below NAME_FLOOR only where the other columns' fewest cells leave no more: a name cut short reads on,
    # a number folded mid-digit does not
    room = max(width - _others(columns, rows, column), NAME_LAST_RESORT, len(columns[column][0]))
    names = [row[column] for row in rows if isinstance(row[column], str)]
    shortened = elide_distinct(names, room)
    for row in rows:
        if isinstance(row[column], str):
            row[column] = shortened[row[column]]
    return column, min(room, max(len(row[column]) for row in rows if isinstance(row[column], str)))


def elide_distinct(names: list[str], width: int) -> dict[str, str]:
    """{name: shortened} where names that would shorten alike (three kernels all `implicit_co…gemm<…>`)
    are cut where they differ instead: the same split for the whole group, moved until each reads
    apart, else a window around their first difference."""
    short = {name: elide_middle(name, width) for name in dict.fromkeys(names)}
    groups: dict[str, list[str]] = {}
    for name, cut in short.items():
        groups.setdefault(cut, []).append(name)
    for group in (g for g in groups.values() if len(g) > 1):
        for head in range(width - 2, 0, -1):
            cuts = [name[:head] + "…" + name[len(name) - (width - 1 - head) :] for name in group]
            if len(set(cuts)) == len(group):
                short.update(zip(group, cuts, strict=True))
                break
        else:
            common = len(_common_prefix(group))
            start = max(0, common - width // 2)
            short.update({name: ("…" + name[start : start + width - 2] + "…") for name in group})
    return short


def _common_prefix(names: list[str]) -> str:
    first, last = min(names), max(names)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i]


def readable_name(name: str) -> str:
    """A CUDA kernel's signature, simplified for a person: no `void `, no parameter list, template
    arguments collapsed to `<…>` (a lone plain argument, like cutlass::Kernel<cutlass_80_…gemm_…>, is
    what names the kernel, so it stays). Anything that does not parse as a signature is kept as it is.
    The full name stays in --json and SQL."""
    text = name.removeprefix("void ").replace("(anonymous namespace)::", "")
    collapsed = _collapse_templates(text)
    if collapsed is None:
        return name
    head, paren, _ = collapsed.partition("(")
    if paren and head and " " not in head.strip() and collapsed.rstrip().endswith((")", ") const")):
        collapsed = head  # a C++ parameter list: the types add nothing a person reads
    return collapsed


def _collapse_templates(text: str) -> str | None:
    """`text` with every outermost `<...>` replaced by `<…>`, a lone plain argument kept; None when the
    brackets do not balance (an `->` or `operator<` we cannot read: leave the name alone)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "<":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ">" and depth > 0:
            depth -= 1
            if depth == 0:
                inner = text[start + 1 : i]
                out.append(f"<{inner}>" if inner.replace("_", "").replace(":", "").isalnum() else "<…>")
        elif depth == 0:
            out.append(ch)
    return "".join(out) if depth == 0 else None


def elide_middle(text: str, width: int) -> str:
    """`text` cut to `width` characters by replacing its middle with `…`: a kernel's namespace and
    function start the name and its tile shape or layout ends it, both worth keeping."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = width // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def short_name(name: str, width: int = 90) -> str:
    """A kernel or op name for a table: simplified (readable_name), its control characters escaped
    (so the cut counts what the terminal shows), then cut in the middle to `width` characters."""
    return elide_middle(safe_line(readable_name(str(name))), width)


def short_names(names: list[str], width: int = 90) -> list[str]:
    """short_name of each; names whose simplified forms collide (two different
    `implicit_convolve_sgemm<…>`) are numbered in order (`… #1`, `… #2`: the number sits at the end,
    which a middle cut keeps), so a table tells them apart; --json has the full names."""
    readable = [safe_line(readable_name(str(n))) for n in names]
    seen: dict[str, int] = {}
    shown = []
    for r in readable:
        if readable.count(r) > 1:
            seen[r] = seen.get(r, 0) + 1
            r = f"{r} #{seen[r]}"
        shown.append(elide_middle(r, width))
    return shown


def one_line(text: str, width: int, more: str = " …") -> str:
    """`text` cut to one terminal line at a word boundary, saying where the rest is: a mark or a note is
    one line on the first screen, its details in --json and the report."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    room = max(width - len(more), 10)
    cut = text[:room].rsplit(" ", 1)[0].rstrip(" ,;:(")
    return cut + more

"""The small HTML blocks a notebook shows for a Profile and a Comparison (their `_repr_html_`). Every
value from a file goes through html.escape; the figures are the ones `summary` and `compare` print."""

from __future__ import annotations

from html import escape

from libreyolo_profile.output.terminal import fmt, fmt_metric

TOP_KERNELS = 5


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def profile_html(profile) -> str:
    """Headline, marks, verdict, metrics (nulls with their reason) and the top kernels or ops."""
    ident, verdict, metrics = profile.identity, profile.verdict, profile.metrics
    parts = [
        f"<p><b>{escape(str(ident['kind']))} profile</b> · {escape(str(ident['device_type']))} · "
        f"{escape(fmt(ident['steps'], unit='count'))} measured steps · <code>{escape(str(ident['path']))}</code></p>"
    ]
    parts += [f"<p><i>mark {escape(name)}</i>: {escape(text)}</p>" for name, text in profile.marks.items()]
    parts.append(
        f"<div style='border:1px solid #888;padding:4px 8px;margin:4px 0'><b>{escape(str(verdict.bound))}</b>"
        f" — {escape(str(verdict.reason))}<br><i>next:</i> {escape(str(verdict.next_step))}</div>"
    )
    rows = [
        [
            name,
            fmt_metric(name, value) if value is not None else "null",
            metrics.unit(name) if value is not None else metrics.null_reason(name) or "not measured",
        ]
        for name, value in metrics.items()
    ]
    parts.append(_table(["metric", "value", "unit (or why null)"], rows))
    if ident["device_type"] == "cpu":
        top = profile.ops(top=TOP_KERNELS).fetchall()
        parts.append(
            "<p>Top ops by self CPU time</p>"
            + _table(["op", "self ms/step", "self %"], [[r[0][:120], fmt(r[1]), fmt(r[2])] for r in top])
        )
    else:
        top = profile.kernels(top=TOP_KERNELS).fetchall()
        parts.append(
            "<p>Top kernels per step</p>"
            + _table(
                ["kernel", "category", "ms/step", "% of device time"],
                [[r[0][:120], r[1], fmt(r[4]), fmt(r[5])] for r in top],
            )
        )
    return "<div class='libreyolo-profile'>" + "".join(parts) + "</div>"


def comparison_html(comparison) -> str:
    """Both sides, the metric rows with their change and significance, the verdicts and the gate."""
    c = comparison.to_dict()
    parts = [
        f"<p><b>compare · {escape(str(c['kind']))} profiles</b>"
        f"<br>before: <code>{escape(str(c['before']['path']))}</code>"
        f"<br>after: <code>{escape(str(c['after']['path']))}</code></p>"
    ]
    rows = [
        [
            r["metric"],
            fmt(r["before"]),
            fmt(r["after"]),
            fmt(r["delta"]),
            fmt(r["delta_pct"], 1),
            "—" if r["significant"] is None else ("yes" if r["significant"] else "no"),
        ]
        for r in c["metrics"]
    ]
    parts.append(_table(["metric", "before", "after", "Δ", "Δ %", "significant"], rows))
    v = c["verdict"]
    parts.append(
        f"<p>verdict: {escape(str(v['before']))} → {escape(str(v['after']))}"
        f"{' (changed)' if v['changed'] else ' (unchanged)'}<br>{escape(c['significance']['sentence'])}</p>"
    )
    if c["gate"] is not None:
        gate = c["gate"]
        details = f": {escape(str(gate['details']))}" if gate.get("details") else ""
        parts.append(f"<p><b>gate: {escape(str(gate['status']))}</b>{details}</p>")
    return "<div class='libreyolo-profile'>" + "".join(parts) + "</div>"

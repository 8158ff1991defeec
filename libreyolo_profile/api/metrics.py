"""The typed views of a profile document the Python API hands out: its metrics with their units and
null reasons, and its verdict. Both read what profile.json already holds (computed in SQL when the
profile was built); nothing here computes a number."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from libreyolo_profile.metric_catalog import METRICS


class Metrics(Mapping[str, "float | int | None"]):
    """The profile's headline metrics, the ones `summary --json` prints: ``metrics["step_ms"]`` is the
    number (None where it could not be measured), ``unit(name)`` its unit and ``null_reason(name)`` why
    a None is None. Iterating gives the names in the summary's order."""

    def __init__(self, values: dict[str, float | int | None], reasons: dict[str, str]):
        self._values = dict(values)
        self._reasons = dict(reasons)

    def __getitem__(self, name: str) -> float | int | None:
        if name not in self._values:
            from libreyolo_profile.output.terminal import close_match_hint

            raise KeyError(f"no metric '{name}' in this profile{close_match_hint(name, list(self._values))}")
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def unit(self, name: str) -> str:
        """The metric's unit from the catalogue (ms, %, img/s, count …)."""
        self[name]  # an unknown name is a KeyError with the nearest one
        return METRICS[name][0]

    def null_reason(self, name: str) -> str | None:
        """Why the metric is None (the same sentence `summary` prints), or None when it has a value."""
        self[name]
        return self._reasons.get(name)

    @property
    def units(self) -> dict[str, str]:
        """{metric: unit} for every metric here."""
        return {name: METRICS[name][0] for name in self._values}

    @property
    def null_reasons(self) -> dict[str, str]:
        """{metric: reason} for every metric that is None."""
        return dict(self._reasons)

    def __repr__(self) -> str:
        return f"Metrics({self._values!r})"


@dataclass(frozen=True)
class Verdict:
    """What bounds the step (``bound``, e.g. host-launch, gpu-compute), why (``reason``), what to try
    (``next_step``), the figures the decision read (``evidence``, {name: value}) and how it was
    decided (``method``; None for a verdict no rule decided)."""

    bound: str
    reason: str
    next_step: str
    evidence: dict = field(default_factory=dict)
    # a factory, not a class attribute: the field stays out of the class's public names
    method: str | None = field(default_factory=lambda: None)

    @classmethod
    def from_document(cls, verdict: dict) -> "Verdict":
        """The verdict of a profile document (profile.json's "verdict")."""
        return cls(
            bound=verdict.get("bound"),
            reason=verdict.get("reason"),
            next_step=verdict.get("next_step"),
            evidence=dict(verdict.get("evidence") or {}),
            method=verdict.get("method"),
        )

    def to_dict(self) -> dict:
        """The verdict as profile.json and `summary --json` carry it."""
        return {
            "bound": self.bound,
            "reason": self.reason,
            "next_step": self.next_step,
            "evidence": dict(self.evidence),
            **({"method": self.method} if self.method is not None else {}),
        }

"""What differs between the two sides of a comparison besides the figures (readers/compare.py): the settings
and environment each was measured with, and whether each metric was timed with the profiler on."""

from __future__ import annotations

from libreyolo_profile.readers.compare_pool import as_mapping, plain
from libreyolo_profile.readers.provenance import is_unprofiled

# settings that differ between any two measurements by construction: not worth a line
SETTINGS_ALWAYS_DIFFER = ("project",)
# the environment fields that change a measurement (software versions, the device, its threads)
ENVIRONMENT_COMPARED = frozenset(
    {"torch", "cuda", "cudnn", "libreyolo", "device", "device_name", "cpu_count", "torch_threads"}
)


def measured_as(metric: str, before, after) -> str:
    """'unprofiled' (both sides' headline, timed without the profiler), 'profiled', or
    'unprofiled → profiled' where the two sides took it from different calls; `before`, `after`: typed heads."""
    sides = ["unprofiled" if is_unprofiled(metric, head) else "profiled" for head in (before, after)]
    return sides[0] if sides[0] == sides[1] else " → ".join(sides)


def _flat(mapping: dict, prefix: str = "") -> dict:
    """A nested settings object as dotted names (profiler.record_shapes), so a line names the one
    field that differs rather than printing both whole objects."""
    flat = {}
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def settings_differences(before: dict, after: dict, section: str = "settings") -> dict:
    """{setting: [before, after]} for each setting that differs between two profile documents."""
    b, a = _flat(as_mapping(before.get(section))), _flat(as_mapping(after.get(section)))
    keep = ENVIRONMENT_COMPARED if section == "environment" else None
    return {
        key: [b.get(key), a.get(key)]
        for key in sorted(set(b) | set(a), key=str)
        if key not in SETTINGS_ALWAYS_DIFFER
        and (keep is None or key in keep)
        and plain(b.get(key)) != plain(a.get(key))
    }

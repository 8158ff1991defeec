"""The training data for `libreyolo profile run`: LibreYOLO's own dataset lookup without downloads,
and the exit-3 message with numbers that would work when the dataset is too small (SPEC §10)."""

from __future__ import annotations

from libreyolo_profile.errors import UsageError


def resolve_dataset(data: str) -> dict:
    """LibreYOLO's own lookup (path, cwd, built-in names) without any download or directory
    creation. Exit 2 when the images are not on this machine, saying how to point at a local YAML."""
    from libreyolo.data import load_data_config

    try:
        cfg = load_data_config(data, autodownload=False)
    except FileNotFoundError:
        try:
            from libreyolo.data.utils import list_builtin_datasets

            builtin = list_builtin_datasets()
        except Exception:
            builtin = ["?"]
        raise UsageError(dataset_not_found(data, builtin)) from None
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise UsageError(f"dataset {data}: LibreYOLO could not read it ({type(exc).__name__}: {first})") from None
    files = cfg.get("train_img_files") or []
    if not files:
        where = cfg.get("train")
        url = cfg.get("download")
        source = f" from {url}" if isinstance(url, str) and url.startswith("http") else ""
        how = (f"LibreYOLO would download it{source}, but `libreyolo profile run` never downloads. ") if url else ""
        raise UsageError(
            f"dataset {data}: no training images on this machine (looked in {where}). {how}"
            "Point at a local dataset YAML whose `train:` resolves to an image directory or list, e.g. "
            "`libreyolo profile run path/to/data.yaml`; a relative `path:` is looked up under "
            "$LIBREYOLO_DATASETS_DIR (default ~/datasets) and then beside the YAML"
        )
    if cfg.get("train_annotation_file"):
        raise UsageError(
            f"dataset {data}: COCO-JSON annotations are not supported by libreyolo profile run; "
            "use a YOLO-format dataset (images/ + labels/)"
        )
    nc = cfg.get("nc")
    if nc is None and cfg.get("names") is not None:
        nc = len(cfg["names"])
    if nc is None:
        raise UsageError(f"dataset {data}: the YAML declares neither nc nor names")
    cfg["nc"] = int(nc)
    return cfg


def dataset_not_found(data: str, builtin: list[str]) -> str:
    """`builtin`: LibreYOLO's built-in dataset names (measure/preflight.py says this before torch is imported)."""
    return (
        f"dataset {data}: no such YAML file (from the cwd) and not a LibreYOLO built-in dataset name "
        f"({', '.join(sorted(builtin))}); pass a local dataset YAML path, e.g. "
        "`libreyolo profile run path/to/data.yaml`"
    )


def too_small_message(data: str, available: int, warmup: int, steps: int, batch: int) -> str:
    need = (warmup + steps) * batch
    ways = [f"a dataset with at least {need} training images"]
    max_steps = available // batch - warmup
    if max_steps >= 1:
        ways.append(f"--steps {max_steps} (the most that fit with --warmup {warmup} --batch {batch})")
    else:
        fit_warmup = available // batch - 1
        if fit_warmup >= 0:
            ways.append(
                f"--warmup {fit_warmup} --steps 1 (at --batch {batch}, the warmup alone needs {warmup * batch} images)"
            )
        else:
            ways.append(f"fewer steps cannot help at --batch {batch}: one batch needs more than the {available} images")
    max_batch = available // (warmup + steps)
    if max_batch >= 1:
        ways.append(f"--batch {max_batch} (the largest that fits with --warmup {warmup} --steps {steps})")
    else:
        ways.append(f"no batch fits {warmup + steps} steps; lower --warmup/--steps to at most {available} together")
    return (
        f"dataset {data} has {available} training images, but one trial needs "
        f"(--warmup {warmup} + --steps {steps}) × --batch {batch} = {need} images from a single pass "
        f"(incomplete last batch dropped, no epoch boundary in the window); no profile written. Ways out: "
        + "; or ".join(ways)
    )

"""docs/commands/ is the CLI's help as it is now (#51): every page equals what docs/commands/generate.py
writes from the current CLI, no page is left for a removed command, and the generator never imports torch.

Regenerate after a CLI change:  python docs/commands/generate.py
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "docs" / "commands" / "generate.py"


def generator():
    spec = importlib.util.spec_from_file_location("docs_commands_generate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_page_is_the_current_help():
    gen = generator()
    expected = gen.pages()
    differ = [name for name, text in expected.items() if _on_disk(gen.PAGES / name) != text]
    assert differ == [], f"docs/commands/ is out of date ({', '.join(differ)}): run `{gen.REGENERATE}`"
    assert gen.stale(expected) == [], f"pages of commands the CLI no longer has: run `{gen.REGENERATE}`"


def _on_disk(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def test_pages_are_plain_text_with_every_command():
    gen = generator()
    expected = gen.pages()
    index = expected[gen.INDEX]
    for name in expected.keys() - {gen.INDEX}:
        assert f"]({name})" in index, f"the index does not link {name}"
        assert f"Usage: {gen.GROUP} {name.removesuffix('.md')} " in expected[name]
    for name, text in expected.items():
        assert "\x1b" not in text and not set("╭╮╰╯│─━┃") & set(text), f"{name}: colour codes or box drawing"
        assert max(len(line) for line in text.split("```text\n", 1)[1].splitlines()) <= gen.WIDTH, name


def test_the_generator_imports_no_torch():
    probe = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('g', {str(SCRIPT)!r})\n"
        "g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g); g.pages()\n"
        "print(sorted(m for m in ('torch', 'libreyolo', 'torchvision') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"

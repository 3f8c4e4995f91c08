"""Characters that render as nothing (or a blank) but are text to a program (round three): Unicode
tag characters (a hidden ASCII copy of any text), the soft hyphen, the Hangul and braille fillers,
the combining grapheme joiner, variation selectors, the Khmer inherent vowels. From a bundle they
passed raw into every view and the HTML report's SVG chart labels; they now show as escapes
(`textsafe`'s one list, which the shell renderer escapes too)."""

from __future__ import annotations

import json
import subprocess

import pytest

from specadvisor import textsafe, vllm_command
from specadvisor.store.bundle import bundle_document
from store_samples import make_session

INVISIBLE = ["\U000e0041", "\U000e007f", "\u00ad", "\u3164", "\u115f", "\u1160", "\u2800", "\u034f", "\ufe0f", "\u17b4", "\uffa0", "\U000e0100"]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_every_destination_makes_it_visible(char):
    text = f"ngram{char}N=4"
    for shown in (textsafe.line(text), textsafe.markup(text), textsafe.tui_markup(text), textsafe.markdown(text), textsafe.html(text)):
        assert char not in shown and "ngram" in shown
    word = vllm_command.shell_word(text)
    assert char not in word
    assert subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout.decode() == text  # pasted, it reads back


def test_a_bundle_full_of_them_shows_none_raw(tmp_path, cli):
    hidden = "".join(INVISIBLE)
    session = make_session()
    session.name = f"team{hidden}run"
    session.model = f"Qwen/Qwen3-8B{hidden}"
    for arm in session.arms:
        arm.label = f"{arm.label}{hidden}"
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(["--db", str(db), "sessions", "import", str(path)])[0] == 0
    sid = session.id[:8]
    for argv in (["sessions", "show", sid], ["sessions", "list"], ["report", sid], ["report", sid, "--format", "html"], ["snippet", sid, "--command"]):
        code, out, err = cli(["--db", str(db), *argv])
        assert code == 0, (argv, err)
        assert not any(c in out + err for c in INVISIBLE), (argv, [f"U+{ord(c):04X}" for c in INVISIBLE if c in out + err])

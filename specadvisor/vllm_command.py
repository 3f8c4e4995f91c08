"""vLLM's command line, built in one place: the server the engine launches and the command a user
pastes are the same argv (model positional after `serve`, `--model` for other launchers, host
127.0.0.1, the speculative config as stable compact JSON with `method` first), and every command the
tool prints or saves is rendered by `shell_command`, so what is pasted is what was meant."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence

from specadvisor.textsafe import UNSAFE_CHARACTERS

HOST = "127.0.0.1"
PASTE_WIDTH = 100  # a command longer than this is shown one option per line, joined by `\`
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_FLAG_WITH_HOME = re.compile(r"(-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*=)(~|\$HOME)(/.*)?", re.DOTALL)


def shell_word(arg: str) -> str:
    """One argument as bash reads it back exactly. Single quotes for everything that is not plain
    (JSON is never brace-expanded), except a leading `~/` or `$HOME/`, which stays outside the
    quotes so the home directory expands (a redacted `~/.cache/...` path works when pasted);
    control, bidi, zero-width and line-separator characters (textsafe's list; never in a sane
    argument) become bash `$'\\n'` / `$'\\u2028'` escapes, never raw, so a pasted line cannot hide
    a second command or reorder what the reader sees."""
    if UNSAFE_CHARACTERS.search(arg):
        return "$'" + UNSAFE_CHARACTERS.sub(_bash_escape, arg.replace("\\", "\\\\").replace("'", "\\'")) + "'"
    if arg == "~" or arg.startswith("~/"):
        return "~" + _rest(arg[1:])
    if arg == "$HOME" or arg.startswith("$HOME/"):
        return '"$HOME"' + _rest(arg[5:])
    flag = _FLAG_WITH_HOME.fullmatch(arg)
    if flag:  # --download-dir=~/x: a tilde after `=` is not expanded in every shell; "$HOME" is
        return shlex.quote(flag.group(1)) + '"$HOME"' + _rest(flag.group(3) or "")
    return shlex.quote(arg)


def _bash_escape(match: re.Match[str]) -> str:
    """A character inside `$'...'`: C0 and DEL as `\\xHH`, everything above (C1 included, which
    `\\xHH` would write as a raw byte) as `\\u` and four hex digits, past U+FFFF `\\U` and eight."""
    char = match.group()
    code = ord(char)
    return _NAMED_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def _rest(path: str) -> str:
    """What follows `~` or `$HOME`: `/` then the rest quoted (nothing when it is empty)."""
    if not path:
        return ""
    return "/" + (shlex.quote(path[1:]) if path[1:] else "")


def shell_command(argv: Sequence[str], *, env: Mapping[str, str] | None = None, width: int | None = None) -> str:
    """The one renderer of a command line for people to paste: `env` as `NAME=value` prefixes, each
    argument by `shell_word`; with `width`, a longer command is broken before each option (an option
    keeps its value on its line) with ` \\` continuations, as vLLM's own docs show them."""
    for name in env or {}:
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(f"not an environment variable name: {name!r}")
    # after `NAME=` a tilde expands in an assignment but not in every other place: "$HOME" always does
    head = [f"{name}={shell_word('$HOME' + value[1:] if value == '~' or value.startswith('~/') else value)}" for name, value in (env or {}).items()]
    groups: list[list[str]] = [head]
    in_head = True
    for arg in argv:
        word, group = shell_word(arg), groups[-1]
        if arg.startswith("-") and len(arg) > 1:
            in_head = False
            groups.append([word])
        elif in_head or not group[0].startswith("-") or len(group) == 1:
            group.append(word)  # the command and its positionals, an option's value, more positionals
        else:
            groups.append([word])  # a positional after an option and its value (docker's image)
    lines = [" ".join(group) for group in groups if group]
    one_line = " ".join(lines)
    if width is None or len(one_line) <= width:
        return one_line
    return " \\\n  ".join(lines)


def shell_script(command: str, *, comment: str = "") -> str:
    """A saved command as a script (the caller writes it executable): bash, since `shell_word` may
    use `$'...'` for a control character."""
    head = "#!/usr/bin/env bash\n" + "".join(f"# {line}\n" for line in comment.splitlines() if line)
    return head + command + "\n"


def spec_config_json(config: Mapping[str, object]) -> str:
    """Compact JSON, `method` first then the other keys sorted: the same config always prints the same.
    Keys set to null are left out: they mean "vLLM's default" (a config read back from a running
    server's /server_info lists every unset key as null)."""
    ordered = {"method": config["method"]} if "method" in config else {}
    ordered.update({key: config[key] for key in sorted(config) if key != "method" and config[key] is not None})
    return json.dumps(ordered, separators=(",", ":"))


def serve_args(
    model: str,
    spec_config: Mapping[str, object] | None,
    *,
    tensor_parallel_size: int = 1,
    port: int = 8000,
    extra_args: Sequence[str] = (),
    engine_cmd: Sequence[str] | None = None,
    host: str = HOST,
) -> list[str]:
    """argv of the server. `vllm serve` takes the model positionally; other launchers get --model."""
    cmd = list(engine_cmd) if engine_cmd else ["vllm", "serve"]
    args = [*cmd, model] if cmd[-1] == "serve" else [*cmd, "--model", model]
    args += ["--host", host, "--port", str(port)]
    if tensor_parallel_size > 1:
        args += ["--tensor-parallel-size", str(tensor_parallel_size)]
    if spec_config:
        args += ["--speculative-config", spec_config_json(spec_config)]
    return args + list(extra_args)


def serve_command(
    model: str,
    spec_config: Mapping[str, object] | None,
    *,
    tensor_parallel_size: int = 1,
    port: int = 8000,
    extra_args: Sequence[str] = (),
    engine_cmd: Sequence[str] | None = None,
    width: int | None = None,
) -> str:
    argv = serve_args(model, spec_config, tensor_parallel_size=tensor_parallel_size, port=port, extra_args=extra_args, engine_cmd=engine_cmd)
    return shell_command(argv, width=width)

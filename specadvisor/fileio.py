"""Writing user-chosen files (reports, bundles, snippets) so that a failure never leaves half a file,
and the one rule every output path follows (`output_target`): `-` is stdout, a folder (`dir/`, or
an existing folder) gets the default name inside it, an existing file is replaced only with
`--force`, and the live database (and its -wal/-shm/-journal) never, whatever the flags."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from specadvisor.errors import InputError


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None, force: bool = False) -> Path:
    """Write via a temporary file in the same folder, fsync and rename; a bad target is an InputError.
    `mode` (e.g. 0o755 for a script) is set before the rename: the file never exists without it.

    The rename replaces whatever has the name, so only a regular file (or nothing) is replaced
    unless `force`: `report -o /dev/null` run as root would otherwise swap the device node for a
    file, and `-o link` would cut a symbolic link (to a file elsewhere) out of its folder."""
    path = Path(path).expanduser()
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"{path} is a folder", hint="give a file name")
    kind = _special_kind(path)
    if kind and not force:
        raise InputError(f"{path} is {kind}; refusing to replace it with a regular file", hint="choose another path, or pass --force to replace it")
    if not path.parent.is_dir():
        raise InputError(f"folder {path.parent} does not exist", hint="create it or choose another path")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write in {path.parent} ({exc.strerror or exc})", hint="choose a writable folder") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, a quota, a read-only target: nothing is left behind
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write {path} ({exc.strerror or exc})", hint="free some disk space or choose another path") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


STDOUT = "-"
_DATABASE_SIDECARS = ("", "-wal", "-shm", "-journal")


def output_target(raw: str | Path, *, default_name: str, force: bool = False, protected: Iterable[Path] = ()) -> Path | None:
    """Where an output goes: None for stdout (`-`), else the file to write. `raw` as typed (a
    trailing `/` names a folder, which must exist); an existing file or anything else with that
    name is an InputError unless `force`; a `protected` file (the live database and its sidecars)
    is one even with `force`."""
    text = str(raw)
    if text == STDOUT:
        return None
    if not text.strip():
        raise InputError("the output path is empty", hint="give a file name, a folder ending in /, or - for stdout")
    path = Path(text).expanduser()
    if text.endswith(("/", os.sep)) or (path.is_dir() and not path.is_symlink()):
        if not path.is_dir():
            raise InputError(f"folder {path} does not exist", hint="create it, or give a file name")
        path = path / default_name
    for guarded in protected:
        if _same_file(path, guarded):
            raise InputError(f"{path} is the sessions database; refusing to write over it", hint="choose another output path")
    if os.path.lexists(path) and not force:
        kind = _special_kind(path)
        what = f"is {kind}" if kind else "already exists"
        raise InputError(f"{path} {what}; refusing to replace it", hint="choose another path, or pass --force to replace it")
    return path


def _same_file(path: Path, database: Path) -> bool:
    """Whether `path` is `database` or one of its SQLite sidecars (by name, and by inode for links)."""
    database = Path(database).expanduser()
    for suffix in _DATABASE_SIDECARS:
        guarded = database.with_name(database.name + suffix)
        try:
            if os.path.abspath(path) == os.path.abspath(guarded) or path.resolve() == guarded.resolve():
                return True
            if path.exists() and guarded.exists() and os.path.samefile(path, guarded):
                return True
        except OSError:
            continue
    return False


def _special_kind(path: Path) -> str | None:
    """What the name holds when it is neither absent nor a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def make_private_dirs(folder: Path) -> None:
    """Create `folder` and its missing parents 0700 (only the owner can list them: they will hold a
    database or server logs). Folders that already exist are the user's and keep their modes."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        created.mkdir(mode=0o700, exist_ok=True)
        os.chmod(created, 0o700)  # mkdir's mode passes through the umask

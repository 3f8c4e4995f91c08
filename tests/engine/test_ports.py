"""Ports for launched servers: a port the kernel hands to two processes in turn is given to one."""

from __future__ import annotations

import os
import time

import pytest

from specadvisor.engine import ports


@pytest.fixture
def kernel_answers(monkeypatch, tmp_path):
    """The kernel's "free port" answers, in order, and a private reservation folder for this test."""
    folder = tmp_path / "reservations"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(ports, "_reservations", lambda: folder)
    answers: list[int] = []
    monkeypatch.setattr(ports, "_unbound_port", lambda: answers.pop(0))
    return answers, folder


def test_a_port_just_given_to_another_process_is_skipped(kernel_answers):
    answers, _ = kernel_answers
    answers.extend([41001, 41001, 41002])  # the same free port twice: two launches at once
    assert ports.free_port() == 41001
    assert ports.free_port() == 41002  # not 41001 again


def test_an_expired_reservation_is_taken_over(kernel_answers):
    answers, folder = kernel_answers
    answers.extend([41003, 41003])
    assert ports.free_port() == 41003
    old = time.time() - ports.RESERVATION_S - 1
    os.utime(folder / "41003", (old, old))  # the process that picked it is long gone
    assert ports.free_port() == 41003


def test_a_folder_others_may_write_is_not_trusted(tmp_path, monkeypatch):
    shared = tmp_path / f"specadvisor-ports-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant or remove reservations there
    monkeypatch.setattr(ports.tempfile, "gettempdir", lambda: str(tmp_path))
    assert ports._reservations() is None
    assert 0 < ports.free_port() < 65536  # still a port: the kernel's answer


def test_the_real_folder_is_private_and_the_port_is_free():
    port = ports.free_port()
    assert ports.port_is_free(port)
    folder = ports._reservations()
    assert folder is not None and (folder / str(port)).exists()
    assert folder.stat().st_mode & 0o077 == 0

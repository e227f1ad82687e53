"""The workdir lock and the clean-up of folders a failed run created."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlab.report import workdir
from jaxlab.report.workdir import LOCK_NAME, WorkdirError, WorkdirLock, WorkdirLocked

REPO = Path(__file__).resolve().parents[2]

# A run that takes the lock, says so, and is then killed with SIGKILL: its lock stays.
_HOLDER = textwrap.dedent("""
    import os, sys, time
    from jaxlab.report.workdir import WorkdirLock
    lock = WorkdirLock(sys.argv[1])
    lock.acquire()
    print("locked", flush=True)
    time.sleep(60)
""")


def _holder(directory: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(directory)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert process.stdout.readline().strip() == "locked"
    return process


def test_lock_is_exclusive_and_released(tmp_path):
    with WorkdirLock(tmp_path) as lock:
        saved = json.loads((tmp_path / LOCK_NAME).read_text())
        assert saved == {"pid": os.getpid(), "host": socket.gethostname()}
        with pytest.raises(WorkdirLocked, match=f"in use by process {os.getpid()}"):
            WorkdirLock(tmp_path).acquire()
        assert lock.path == tmp_path / LOCK_NAME
    assert not (tmp_path / LOCK_NAME).exists()
    with WorkdirLock(tmp_path):  # free again
        pass


def test_live_subprocess_holds_the_lock_and_a_killed_one_is_stale(tmp_path, capsys):
    holder = _holder(tmp_path)
    try:
        with pytest.raises(WorkdirLocked, match=f"process {holder.pid} on this host"):
            WorkdirLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == holder.pid  # left behind
    with WorkdirLock(tmp_path):
        assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert f"stale lock {tmp_path / LOCK_NAME} of process {holder.pid}" in capsys.readouterr().err


def test_lock_of_another_host_or_unreadable_is_refused(tmp_path):
    path = tmp_path / LOCK_NAME
    path.write_text(json.dumps({"pid": 1, "host": "elsewhere.example"}))
    with pytest.raises(WorkdirLocked, match="host elsewhere.example .*delete that file"):
        WorkdirLock(tmp_path).acquire()
    path.write_text("")
    with pytest.raises(WorkdirLocked, match="unreadable lock file"):
        WorkdirLock(tmp_path).acquire()
    assert path.read_text() == ""  # never removed


def test_release_leaves_another_runs_lock(tmp_path):
    lock = WorkdirLock(tmp_path)
    lock.acquire()
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": 2, "host": "other"}))
    lock.release()
    assert (tmp_path / LOCK_NAME).exists()


def test_claimed_creates_and_removes_empty_folders(tmp_path):
    target = tmp_path / "a" / "b" / "c"
    with workdir.claimed(target) as path:
        assert path.is_dir() and (target / LOCK_NAME).exists()
    assert not (tmp_path / "a").exists()
    with workdir.claimed(target):
        (target / "kept.txt").write_text("x")
    assert (target / "kept.txt").exists() and not (target / LOCK_NAME).exists()


def test_unusable_directories_are_workdir_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(WorkdirError, match="cannot create the directory .*file/sub"):
        workdir.make_dirs(tmp_path / "file" / "sub")
    with pytest.raises(WorkdirError, match="cannot create"):
        workdir.make_dirs("/proc/jaxlab-test/sub")
    if os.geteuid() != 0:  # root writes anywhere
        readonly = tmp_path / "ro"
        readonly.mkdir(mode=0o500)
        with pytest.raises(WorkdirError, match="cannot write the lock file"):
            WorkdirLock(readonly).acquire()

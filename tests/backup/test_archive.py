"""The archive: a manifest of checksums, verification, and unpacking that never leaves its folder."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from bot.backup.archive import unpack_archive, verify_archive, write_archive
from bot.errors import BackupError


def staged(tmp_path: Path) -> Path:
    staging = tmp_path / "staging"
    (staging / "state" / "sessions").mkdir(parents=True)
    (staging / "config.yaml").write_text("llm: {}\n")
    (staging / "state" / "sessions" / "a.jsonl").write_text('{"x": 1}\n')
    return staging


def test_written_archive_verifies_and_lists_every_file(tmp_path: Path) -> None:
    target = tmp_path / "b.tar.gz"
    manifest = write_archive(staged(tmp_path), target, None)
    assert set(manifest.files) == {"config.yaml", "state/sessions/a.jsonl"}
    assert verify_archive(target).files == manifest.files
    assert target.stat().st_mode & 0o077 == 0


def test_tampered_member_fails_verification(tmp_path: Path) -> None:
    target = tmp_path / "b.tar.gz"
    manifest = write_archive(staged(tmp_path), target, None)
    forged = tmp_path / "forged.tar.gz"
    with tarfile.open(target) as src, tarfile.open(forged, "w:gz") as out:
        for member in src:
            data = src.extractfile(member).read()  # type: ignore[union-attr]
            if member.name == "config.yaml":
                data = b"owners: [telegram:666]\n"
                member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    assert manifest.files
    with pytest.raises(BackupError, match="config.yaml does not match its checksum"):
        verify_archive(forged)


def test_member_that_climbs_out_is_refused(tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    data = b"pwned"
    manifest = {"version": "0", "created_at": "now", "files": {"../escape": "x"}}
    with tarfile.open(evil, "w:gz") as out:
        for name, body in (("manifest.json", json.dumps(manifest).encode()), ("../escape", data)):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            out.addfile(info, io.BytesIO(body))
    with pytest.raises(BackupError, match="leaves the restore folder"):
        unpack_archive(evil, tmp_path / "home")
    assert not (tmp_path / "escape").exists()


def test_symlink_member_is_refused(tmp_path: Path) -> None:
    evil = tmp_path / "link.tar.gz"
    manifest = {"version": "0", "created_at": "now", "files": {"state": "x"}}
    with tarfile.open(evil, "w:gz") as out:
        body = json.dumps(manifest).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        out.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("state")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        out.addfile(link)
    with pytest.raises(BackupError, match="not a plain file"):
        verify_archive(evil)


def test_an_archive_without_manifest_is_not_a_backup(tmp_path: Path) -> None:
    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz"):
        pass
    with pytest.raises(BackupError, match="no manifest.json"):
        verify_archive(plain)

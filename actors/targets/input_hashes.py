"""The files a request is made of, hashed for its fingerprint: an agent's scripts (each word of its
command line that names a file), a fixed workdir's tree, a python target's module. Each is read once
per plan (`InputHashes`: one run, one round, one tuning step), never kept for the process, so a
long-lived `engine serve` or host app sees an edited script at its next run."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

BIG_FILE = 64 << 20  # a file this large (a binary) is known by its size and time, not read


class InputHashes:
    """The hashes of the files a plan's requests are made of, each read once per plan."""

    def __init__(self, base_dir: Path | None = None) -> None:
        self.base_dir = base_dir
        self._files: dict[str, str] = {}
        self._trees: dict[str, str] = {}
        self._paths: dict[tuple[str, str | None, bool], Path | None] = {}  # a word's file, looked up once

    def file(self, path: Path) -> str:
        key = str(path)
        if key not in self._files:
            self._files[key] = _file_hash(path)
        return self._files[key]

    def tree(self, folder: str) -> str:
        if folder not in self._trees:
            self._trees[folder] = _tree_hash(Path(folder))
        return self._trees[folder]

    def scripts(self, words: list[str], workdir: str | None) -> dict[str, str]:
        """Each word of a command line that names a file, with the file's hash: an edited agent
        script is a different subject. A bare first word is looked up on PATH (`python3`, `claude`)."""
        found: dict[str, str] = {}
        for index, word in enumerate(words):
            key = (word, workdir, index == 0)
            if key not in self._paths:
                self._paths[key] = self._path_of(word, workdir, on_path=index == 0)
            path = self._paths[key]
            if path is not None:
                found[word] = self.file(path)
        return found

    def _path_of(self, word: str, workdir: str | None, on_path: bool) -> Path | None:
        if not word or len(word) > 1024 or "\n" in word or "\0" in word or word.startswith("-"):
            return None
        if on_path and "/" not in word:
            where = shutil.which(word)
            return Path(where) if where else None
        path = Path(word).expanduser()
        bases = [] if path.is_absolute() else [b for b in (self.base_dir, workdir and Path(workdir)) if b]
        for candidate in [path] if path.is_absolute() else [Path(b) / path for b in bases]:
            try:
                if candidate.is_file():
                    return candidate
            except OSError:
                continue
        return None


def _file_hash(path: Path) -> str:
    try:
        stat = path.stat()
        if stat.st_size > BIG_FILE:
            return f"size:{stat.st_size}:mtime:{stat.st_mtime_ns}"
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except OSError:  # unreadable: the trial will say so
        return ""


def _tree_hash(root: Path) -> str:
    """A hash of a command agent's fixed workdir: every file's path and bytes (the fixtures it reads)."""
    digest = hashlib.blake2b(digest_size=16)
    if not root.is_dir():
        return ""
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\x00")
        digest.update(_file_hash(path).encode())
    return digest.hexdigest()

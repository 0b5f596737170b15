"""Where bundles live: a local path, or an fsspec URL (`s3://`, `gs://`, `memory://`...) when the
optional `bundles` extra is installed. Every failure is a UserError naming the location."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from engine.errors import InputError, UserError
from engine.store.bundle_format import Bundle, BundleError, BundleHeader, read_bundle, read_header

SUFFIX = ".bundle"


def is_url(location: str | os.PathLike[str]) -> bool:
    return "://" in str(location)


def looks_like_bundle(location: str | os.PathLike[str]) -> bool:
    """A path or URL that names a bundle file (by its suffix), for commands that take a run or a file."""
    text = str(location)
    return text.endswith(SUFFIX) and (is_url(text) or Path(text).is_file())


def _fsspec(option: str) -> object:
    try:
        import fsspec
    except ImportError:
        raise InputError(
            "engine", option, "a URL needs fsspec: pip install 'engine[bundles]' (or pass a local path)"
        ) from None
    return fsspec


@contextmanager
def open_location(location: str | os.PathLike[str], mode: str, option: str) -> Iterator[IO[bytes]]:
    """A binary file at a local path or an fsspec URL, opened for 'rb' or 'wb'."""
    text = str(location)
    try:
        if is_url(text):
            with _url_call(text, option):
                opened = _fsspec(option).open(text, mode)  # type: ignore[attr-defined]
            with opened as handle:
                yield handle
        elif "w" in mode:
            with _replacing(Path(text)) as handle:
                yield handle
        else:
            with open(text, mode) as handle:
                yield handle
    except FileNotFoundError:
        raise InputError(text, option, "no such file") from None
    except IsADirectoryError:
        raise InputError(text, option, "expected a file, found a directory") from None
    except PermissionError as exc:
        raise InputError(text, option, f"not allowed: {exc.strerror}") from None


@contextmanager
def _replacing(path: Path) -> Iterator[IO[bytes]]:
    """Write beside the target, then rename over it: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with open(partial, "wb") as handle:
            yield handle
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def load_bundle(location: str | os.PathLike[str], option: str = "FILE") -> Bundle:
    with open_location(location, "rb", option) as handle:
        try:
            return read_bundle(handle, str(location))
        except BundleError as exc:
            raise UserError(str(exc)) from None


def bundle_headers(
    directory: str | os.PathLike[str], option: str, warn: Callable[[str], None] | None = None
) -> list[tuple[str, BundleHeader]]:
    """(location, header) of every `*.bundle` in a directory (local or URL); damaged ones are skipped
    (a CI cache may hold an old, cut-off upload), each named to `warn`."""
    found: list[tuple[str, BundleHeader]] = []
    for location in _list(str(directory), option):
        with open_location(location, "rb", option) as handle:
            try:
                found.append((location, read_header(handle, location)))
            except BundleError as exc:
                if warn is not None:
                    warn(skipped_bundle(location, str(exc)))
    return found


def skipped_bundle(location: str, why: str) -> str:
    return f"skipped damaged bundle {location}: {why.removeprefix(location).lstrip(': ')}"


@contextmanager
def _url_call(location: str, option: str) -> Iterator[None]:
    """fsspec knows a URL's scheme by name only: its filesystem's own package may be missing (s3fs for
    s3://), or the scheme unknown. Either is one line naming the URL, not a traceback."""
    try:
        yield
    except ImportError as exc:
        raise InputError(location, option, f"{exc} (the filesystem's own package, beside fsspec)") from None
    except ValueError as exc:
        raise InputError(location, option, f"not a URL fsspec can open ({exc})") from None


def _list(directory: str, option: str) -> list[str]:
    if is_url(directory):
        fsspec = _fsspec(option)
        with _url_call(directory, option):
            fs, root = fsspec.core.url_to_fs(directory)  # type: ignore[attr-defined]
        if not fs.exists(root):
            return []
        names = [p for p in fs.ls(root, detail=False) if str(p).endswith(SUFFIX)]
        return sorted(fs.unstrip_protocol(p) for p in names)
    path = Path(directory)
    if not path.exists():
        return []
    if not path.is_dir():
        raise InputError(directory, option, "expected a directory of .bundle files")
    return sorted(str(p) for p in path.glob(f"*{SUFFIX}"))

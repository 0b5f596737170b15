"""A Python callable as the target, for applications that embed engine.

The callable receives the TargetRequest (variant flags, overrides tag, params,
prompt) and returns a str, a TargetResponse, or an awaitable of either. Sync
callables run in a worker thread so they cannot stall the actors.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import trio

from engine.actors.targets.target_protocol import TargetContext, TargetError, TargetRequest, TargetResponse
from engine.events.spec import PythonTargetSpec


def import_callable(path: str, base_dir: Path | None = None) -> Callable[..., Any]:
    """'package.module:function', looked up on sys.path and then in base_dir (the experiment file's
    folder), so an experiment and its target module can sit side by side."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected 'module:function', got {path!r}")
    if base_dir is not None and str(base_dir) not in sys.path:
        # appended, not prepended: a file in the experiment's folder must not shadow an installed module
        sys.path.append(str(base_dir))
    module = importlib.import_module(module_name)
    try:
        found = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no {attr!r}") from None
    if not callable(found):
        raise ValueError(f"{path!r} is not callable")
    return found  # type: ignore[no-any-return]


T = TypeVar("T", bound=msgspec.Struct)
_ENCODER = msgspec.msgpack.Encoder()
_DECODERS: dict[type, msgspec.msgpack.Decoder[Any]] = {}


def private_copy(value: T) -> T:
    """A copy that user code may change at will. Its cases and variants are the run's own objects:
    the logged spec that the live report and the kept snapshots fold, so a callable that edited
    `request.case.metadata` in place would make them differ from a replay of the log. A msgpack round
    trip (cheap: benchmarks/README.md#in-code-trials) gives what the log's own codec gives a replay."""
    decoder = _DECODERS.get(type(value))
    if decoder is None:
        decoder = _DECODERS[type(value)] = msgspec.msgpack.Decoder(type(value))
    return decoder.decode(_ENCODER.encode(value))  # type: ignore[no-any-return]


class PythonTarget:
    @classmethod
    def from_spec(cls, spec: PythonTargetSpec, context: TargetContext) -> PythonTarget:
        """A callable the embedding app registered under this name, else 'module:function' imported."""
        return cls(context.callables.get(spec.callable) or import_callable(spec.callable, context.base_dir))

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._fn = fn
        self._is_async = inspect.iscoroutinefunction(fn)

    async def call(self, request: TargetRequest) -> TargetResponse:
        request = private_copy(request)
        try:
            if self._is_async:
                value = await self._fn(request)
            else:
                value = await trio.to_thread.run_sync(self._fn, request, abandon_on_cancel=True)
        except TargetError:
            raise
        except Exception as exc:  # the subject's own failure: recorded, not fatal to the run
            raise TargetError("model", f"{type(exc).__name__}: {exc}") from exc
        if isinstance(value, TargetResponse):
            return value
        text = str(value)
        return TargetResponse(text=text, tokens_in=len(request.prompt.split()), tokens_out=len(text.split()))

    async def aclose(self) -> None:
        return None

"""A Python callable as the target, for applications that embed engine (seed 002).

The callable receives the TargetRequest (variant flags, overrides tag, params,
prompt) and returns a str, a TargetResponse, or an awaitable of either. Sync
callables run in a worker thread so they cannot stall the actors.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import trio

from actors.targets.base import TargetError, TargetRequest, TargetResponse


def import_callable(path: str) -> Callable[..., Any]:
    module_name, _, attr = path.partition(":")
    if not attr:
        raise ValueError(f"python target: expected 'module:function', got {path!r}")
    module = importlib.import_module(module_name)
    return getattr(module, attr)  # type: ignore[no-any-return]


class PythonTarget:
    def __init__(self, fn: Callable[..., Any]) -> None:
        self._fn = fn
        self._is_async = inspect.iscoroutinefunction(fn)

    async def call(self, request: TargetRequest) -> TargetResponse:
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

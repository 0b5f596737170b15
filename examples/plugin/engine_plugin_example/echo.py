"""`kind = "echo"`: a target that answers with the prompt, in upper case when `shout` is set."""

from __future__ import annotations

import trio

from engine.actors.targets.target_protocol import TargetContext, TargetRequest, TargetResponse
from engine.events.targets import BaseTarget, TargetKind


class EchoTargetSpec(BaseTarget, tag="echo"):
    prefix: str = ""
    shout: bool = False


class EchoTarget:
    def __init__(self, spec: EchoTargetSpec) -> None:
        self.spec = spec

    @classmethod
    def from_spec(cls, spec: EchoTargetSpec, context: TargetContext) -> EchoTarget:
        return cls(spec)

    async def call(self, request: TargetRequest) -> TargetResponse:
        await trio.lowlevel.checkpoint()  # a cancelled trial ends here
        text = self.spec.prefix + request.prompt
        words = len(text.split())
        answer = text.upper() if self.spec.shout else text
        return TargetResponse(text=answer, tokens_in=words, tokens_out=words)

    async def aclose(self) -> None:
        return None


KIND = TargetKind(EchoTargetSpec, "engine_plugin_example.echo:EchoTarget", {"prefix": "> "})

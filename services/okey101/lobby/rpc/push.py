"""LobbyService's push devices: RegisterPushDevice and UnregisterPushDevice (the devices are
``lobby.push.devices``, what they are sent ``lobby.push``; docs/push.md)."""

from __future__ import annotations

from okey.v1 import lobby_pb2

from okey101.lobby.errors import Conflict, Invalid
from okey101.lobby.push import devices
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls
from okey101.lobby.stores import answers
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id


class PushCalls(LobbyCalls):
    """Push devices (module docstring)."""

    async def RegisterPushDevice(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RegisterPushDeviceRequest, context: Context
    ) -> lobby_pb2.RegisterPushDeviceResponse:
        async def work() -> lobby_pb2.RegisterPushDeviceResponse:
            check_request_id(request.request_id)
            platform = devices.platform_of(request.platform)
            token = devices.checked_token(
                platform, request.token, allow_loopback=self.push.allow_loopback
            )
            language = devices.checked_language(request.language)
            if platform not in self.push.configured:
                raise Conflict("PUSH_PLATFORM_NOT_CONFIGURED", platform=devices.SHOWN[platform])
            player = await self._caller()
            call = answers.once(
                "RegisterPushDevice",
                f"player:{player.player_id}",
                request,
                lobby_pb2.RegisterPushDeviceResponse,
            )

            async def register() -> lobby_pb2.RegisterPushDeviceResponse:
                device_id = await self.repository.push_devices.register(
                    player.player_id, platform, token, language
                )
                return lobby_pb2.RegisterPushDeviceResponse(device_id=device_id)

            # Registering is idempotent by itself (the same token, the same device).
            return await answers.kept_after(self.database, call, register)

        return await self._answer(request, context, work)

    async def UnregisterPushDevice(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.UnregisterPushDeviceRequest, context: Context
    ) -> lobby_pb2.UnregisterPushDeviceResponse:
        async def work() -> lobby_pb2.UnregisterPushDeviceResponse:
            check_request_id(request.request_id)
            if request.device_id:
                device_id = checks.identifier(request.device_id, "device_id")
                token = ""
            elif request.token:
                device_id = ""
                token = checks.length(request.token, "token", 1, devices.TOKEN_MAX)
            else:
                raise Invalid("FIELD_REQUIRED", field="device_id")
            player = await self._caller()
            call = answers.once(
                "UnregisterPushDevice",
                f"player:{player.player_id}",
                request,
                lobby_pb2.UnregisterPushDeviceResponse,
            )

            async def unregister() -> lobby_pb2.UnregisterPushDeviceResponse:
                removed = await self.repository.push_devices.unregister(
                    player.player_id, device_id=device_id, token=token
                )
                return lobby_pb2.UnregisterPushDeviceResponse(removed=removed)

            return await answers.kept_after(self.database, call, unregister)

        return await self._answer(request, context, work)


__all__ = ["PushCalls"]

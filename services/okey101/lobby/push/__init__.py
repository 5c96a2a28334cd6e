"""Push notifications (docs/push.md): a player's devices, and the notifications their events owe
while the player has no WatchPlayer stream open.

- ``devices``: the devices players register (``RegisterPushDevice``): a platform, its token and
  a language, one device per token, at most ``MAX_DEVICES`` a player (the oldest goes);
- ``outbox``: one row per pushed event (TURN_STARTED, TOURNAMENT_SEATED, TOURNAMENT_STARTING,
  SEAT_AWAY) per device, written in the event's own transaction (``PlayerEvents.append``), so a
  notification exists if and only if its event does, once; claimed by any pod's sender;
- ``presence``: the WatchPlayer streams open on any pod, as rows with a lease, so the sender
  knows at send time that a player has one (and then sends nothing: the stream told them);
- ``texts``: each kind's title and body in English and Turkish, and the data an app deep-links
  with;
- ``delivery``: what every sender shares (a notification, an outcome, the HTTP clients,
  Retry-After);
- ``fcm``, ``apns``, ``webhook``: the senders (FCM HTTP v1 with a service account's OAuth token;
  APNs over HTTP/2 with an ES256 provider token; a JSON POST signed with HMAC-SHA256);
- ``providers``: which platforms the settings configure, and their senders;
- ``sender``: the loop every lobby pod runs: claims due notifications, drops the stale ones,
  sends the rest, retries with back-off, removes the devices a provider says are gone.
"""

"""The application service in parts: ``CanastaApp`` (``app.application``) is made of them.

- ``core``: the wiring: the event store, transcoding, snapshots, the aggregate cache and its
  reads, group commit and saving.
- ``accounts``: registering, bearer tokens, roles.
- ``sessions``: browser sessions (the session cookie's server side).
- ``tables``: creating and joining tables, teams, starting and stopping games, opening deals.
- ``commands``: the players' commands (R-CMD-1): one decide-and-record core, read from the
  process's cache or from the store.
- ``dry_run``: a command decided on a copy and never recorded (``POST .../commands/check``).

Each part loads aggregates, lets them decide and saves them: the rules are in ``domain``.
"""

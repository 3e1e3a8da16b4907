"""The shared test kit: helpers that more than one test folder needs, each written once.

- ``tests.support.games``: random legal deals through the application service, bounded so a
  deal that never ends fails the test instead of hanging it. The driver itself, the seeded
  random source (``SeededRandom``) and the table helpers are the demo's, in ``app.autoplay``.
- ``tests.support.http``: players and tables over HTTP (``register_player``, ``open_table``,
  ``Game``) for the in-process API tests and anything else that drives the API.
- ``tests.support.waiting``: ``wait_for``, polling a condition another thread or process
  brings about, with a bound so a test that waits in vain fails instead of hanging (it returns
  what the condition gave); ``timed``, a call and the seconds it took; ``all_at_once``, work
  run in threads at the same time, failing if any of it raised.

The command encoder (domain command -> JSON body) is the app's: ``app.schemas.command_body``.
"""

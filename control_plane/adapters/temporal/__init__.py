"""Run packs on Temporal with the vocabulary intact (optional extra ``temporal``).

Modules, each importable on its own (importing this package does not import
``temporalio``, so ``packctl`` works without the extra):

* :mod:`~control_plane.adapters.temporal.messages` -- the dataclasses that travel: ``PackCall``,
  ``RetrySettings``, ``InvokePackRequest``;
* :mod:`~control_plane.adapters.temporal.bridge` -- error envelope <-> ``ApplicationError``, and
  recovery of the typed envelope from any Temporal failure chain;
* :mod:`~control_plane.adapters.temporal.activities` -- the pack invocation activity (full
  enforcement through :class:`~control_plane.core.invoke.Invoker`);
* :mod:`~control_plane.adapters.temporal.workflows` -- ``InvokePackWorkflow`` and the
  fail-safe floor interceptor;
* :mod:`~control_plane.adapters.temporal.worker` -- ``create_worker`` / ``run_worker``;
* :mod:`~control_plane.adapters.temporal.client` -- ``TemporalPackClient.invoke`` (same result or
  typed error as over gRPC);
* :mod:`~control_plane.adapters.temporal.cli` -- ``packctl worker`` and ``packctl temporal-call``.

See ``docs/temporal.md``.
"""

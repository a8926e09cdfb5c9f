"""Classification of well-known client libraries: built-in plugins on the kernel's
``classify_exception`` hook that know the exceptions of gRPC (``grpc``: statuses, status
details, ``RetryInfo``), ``websockets`` (close codes), httpx/httpcore, requests/urllib3,
aiohttp, ``xmlrpc.client`` and GitPython (``libraries``: rows of class names), and the HTTP
statuses those clients carry only in their text (``proxy``: a proxy's refused tunnel,
retries exhausted on a status).

The libraries are never imported: their exceptions are recognised by class name and
module, their tables are data (``tables.toml``, read by ``_data`` with the kernel's
loader). The kernel keeps its readings of the standard library (TLS, subprocesses and
tools, sockets: ``control_plane/_kernel/classifiers/``); the runtime asks these plugins
after those, in the order of ``BUILTIN_CLASSIFIERS`` (``control_plane/_runtime/plugins.py``).
"""

"""The benchmark suite: the control plane against a bare ``grpc.aio`` echo server.

Run it with ``python -m bench`` (``--help`` for the flags); results land in
``bench/results/`` as Markdown and JSON. See ``bench/README.md`` for the setup.
"""

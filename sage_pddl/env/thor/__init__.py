"""AI2-THOR behind a ZMQ request/reply server, so the planner machine needs no GPU.

`protocol` defines the versioned JSON messages (docs/thor-protocol.md), `server` serves any
environment backend (`symbolic` or `ai2thor`), `client` is the `thor` environment that talks to
it, `ai2thor_backend` maps the household actions onto AI2-THOR's Controller.
"""

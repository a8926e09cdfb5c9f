"""Generated gRPC code for control_plane.v1 (scripts/gen_proto.py); do not edit."""

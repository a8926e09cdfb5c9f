"""gRPC: the rich status, the server, the client, auth and admission."""

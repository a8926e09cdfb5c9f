"""letta-client (Letta's Python SDK, a Stainless client generated from Letta's OpenAPI spec,
httpx underneath; here its sync client) against a fake Letta server answering the bodies of
its FastAPI exception handlers (``{"detail": ...}``, FastAPI's validation list, a Bedrock
permission ``{"error": {type, message, details}}``) and statuses: 401 in secure mode, 403,
404 an unknown agent, 409 a unique or a foreign-key violation, 400 and 422 bad input, 500, a
proxy's HTML 502 and 503 when its database times out; plus the SDK's own timeout and the
transport failures. The SDK's retries are turned off."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("letta-client", "fake Letta server", http_setup, half="heldout16")

_AGENT = "agent-6f1c2a9e-4b7d-4e0a-8c3f-2d5b9e7a1c40"


def _client(url: str) -> Any:
    from letta_client import Letta

    return Letta(api_key="sk-let-PLANTEDlettakey", base_url=url, timeout=1.0, max_retries=0)


def _create_tool(url: str) -> Any:
    return _client(url).tools.create(
        source_code=(
            "def lookup_order(order_id: str) -> str:\n"
            '    """Look an order up.\n\n    Args:\n        order_id: the order\n    """\n'
            "    return order_id\n"
        ),
        description="Look up an order by id",
    )


ROWS: list[Row] = [
    (
        "bad_password",
        401,
        {"detail": "Unauthorized"},
        {},
        AUTH,
        None,
        "the server runs in secure mode and the key is not its password",
    ),
    (
        "bedrock_denied",
        403,
        {
            "error": {
                "type": "bedrock_permission_denied",
                "message": "Unable to access the required AI model. Please check your "
                "Bedrock permissions or contact support.",
                "details": {
                    "model_arn": "arn:aws:bedrock:us-east-1::foundation-model/"
                    "anthropic.claude-3-5-sonnet-20241022-v2:0",
                    "reason": "AccessDeniedException",
                },
            }
        },
        {},
        AUTH,
        None,
        "the server's Bedrock credentials may not use the model",
    ),
    (
        "tool_exists",
        409,
        {
            "detail": "A unique constraint was violated for Tool. Check your input for "
            "duplicates: (psycopg2.errors.UniqueViolation) duplicate key value violates unique "
            'constraint "uix_name_organization"\nDETAIL:  Key (name, organization_id)=('
            "lookup_order, org-00000000-0000-4000-8000-000000000000) already exists."
        },
        {},
        EXISTS,
        None,
        "a tool of this name already exists in the organization",
    ),
    (
        "bad_source",
        400,
        {"detail": "Failed to parse source code: invalid syntax (<unknown>, line 3)"},
        {},
        INT,
        None,
        "the tool's source does not parse (the caller's input)",
    ),
    (
        "validation",
        422,
        {
            "detail": [
                {
                    "type": "missing",
                    "loc": ["body", "source_code"],
                    "msg": "Field required",
                    "input": {"description": "Look up an order by id"},
                }
            ]
        },
        {},
        INT,
        None,
        "the body fails FastAPI's validation (the caller's input)",
    ),
    (
        "internal",
        500,
        {"detail": "An internal server error occurred"},
        {},
        NET,
        None,
        "the Letta server failed",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "the reverse proxy got no answer from the server",
    ),
    (
        "database_timeout",
        503,
        {"detail": "The database is temporarily unavailable. Please try again later."},
        {},
        NET,
        None,
        "the server's database timed out",
    ),
]
http_cases(FAM, _create_tool, ROWS)


@FAM.case("agent_not_found", NF, "HTTP 404: the agent does not exist")
def _agent_missing(ctx: Http) -> Any:
    ctx.http.set(404, {"detail": "Agent not found"})
    return _client(ctx.http.url).agents.retrieve(_AGENT)


@FAM.case(
    "block_missing_reference",
    NF | INT,
    "HTTP 409: the agent names a memory block that does not exist",
)
def _foreign_key(ctx: Http) -> Any:
    ctx.http.set(
        409,
        {
            "detail": "A foreign key constraint was violated for Agent. Check your input for "
            "missing or invalid references: (psycopg2.errors.ForeignKeyViolation) insert or "
            'update on table "blocks_agents" violates foreign key constraint '
            '"blocks_agents_block_id_fkey"\nDETAIL:  Key (block_id)=('
            "block-0b1e6c3d-9a7f-4d2e-8b5c-1f3a6e9d2c71) is not present in table "
            '"block".'
        },
    )
    return _client(ctx.http.url).agents.create(
        name="support-bot",
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        block_ids=["block-0b1e6c3d-9a7f-4d2e-8b5c-1f3a6e9d2c71"],
    )

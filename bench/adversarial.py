"""Adversarial inputs for the scrubber: texts built to make a backtracking regex stall.

Shared by ``bench/redact.py`` (µs per KB) and ``tests/test_redact_growth.py`` (growth ratios).
Each builder takes a size in characters and returns a text of about that size.
"""

from __future__ import annotations

from collections.abc import Callable

from control_plane._kernel.secret_rules import RULES

__all__ = ["ADVERSARIAL", "STALLS"]


def _repeat(unit: str, prefix: str = "", suffix: str = "") -> Callable[[int], str]:
    def build(size: int) -> str:
        count = max(1, (size - len(prefix) - len(suffix)) // len(unit))
        return prefix + unit * count + suffix

    return build


#: The four stall inputs of issue 16, exactly as reported against main's scrubber.
STALLS: dict[str, Callable[[int], str]] = {
    "authorization_spaces": _repeat(" ", "authorization:"),
    "eyJ_dash": _repeat("eyJ-"),
    "a_dot_before_scheme": _repeat("a.", suffix="a://"),
    "sk_dash": _repeat("sk-"),
}

ADVERSARIAL: dict[str, Callable[[int], str]] = dict(STALLS)
ADVERSARIAL.update(
    {
        "authorization_tabs_then_quote": _repeat("\t", 'authorization: "', '"'),
        "authorization_repeated": _repeat("authorization: "),
        "authorization_escaped_quotes": _repeat('\\"', "Authorization"),
        "bearer_spaces": _repeat(" ", "Bearer"),
        "bearer_repeated": _repeat("Bearer "),
        "cookie_backslashes": _repeat("\\", "Cookie: "),
        "pem_dashes": _repeat("-", "-----BEGIN RSA PRIVATE KEY-----"),
        "pem_end_prefixes": _repeat("-----END", "-----BEGIN PRIVATE KEY-----"),
        "pem_begins": _repeat("-----BEGIN PRIVATE KEY"),
        "scheme_run": _repeat("a", suffix=":/"),
        "url_at_signs": _repeat("a@", "x://u:"),
        "url_colons": _repeat(":", "x://"),
        "url_schemes": _repeat("a://"),
        "url_user_no_at": _repeat("a", "https://user:"),
        "jwt_dots": _repeat("eyJabcde.", ""),
        "jwt_two_segments": _repeat("a", "eyJabcdef.eyJabcdef."),
        "password_equals": _repeat("password="),
        "password_spaces": _repeat(" ", "password"),
        "password_quotes": _repeat('"', "password="),
        "password_escaped_open": _repeat("\\", 'password=\\"'),
        "password_escaped_runs": _repeat('\\\\\\"a', 'password: \\"'),
        "password_unterminated_json": _repeat("a\\\\", 'password: "'),
        "password_keys": _repeat("password"),
        "secret_newlines": _repeat("secret\n"),
        "key_underscores": _repeat("_key"),
        "pwd_sig": _repeat("pwdsig"),
        "unicode_escapes": _repeat("\\u0070"),
        "percent_sep": _repeat("%3D", "password"),
        "cli_user": _repeat("-u a:"),
        "cli_flags": _repeat("-a", "--"),
        "cli_flag_words": _repeat("a-", "--"),
        "cli_password_spaces": _repeat(" ", "--password"),
        "mysql_spaces": _repeat(" ", "mysql"),
        "mysql_repeated": _repeat("mysql "),
        "sshpass_flags": _repeat(" -x", "sshpass"),
        "redis_cli": _repeat("redis-cli "),
        "short_p": _repeat("-pa"),
        "alnum_run": _repeat("aB3"),
        "base64_run": _repeat("aB3+/"),
        "base64_with_padding": _repeat("aB3=="),
        "akia_run": _repeat("AKIA"),
        "ghp_run": _repeat("ghp_"),
        "glpat_run": _repeat("glpat-"),
        "xox_run": _repeat("xoxb-"),
        "sg_run": _repeat("SG."),
        "stripe_run": _repeat("sk_live_"),
        "hooks_run": _repeat("/", "hooks.slack.com/services"),
        "telegram_digits": _repeat("1234567890:AA"),
        "digits": _repeat("7"),
        "spaces": _repeat(" "),
        "mixed_separators": _repeat("token: = \\n"),
        # Non-ASCII text takes the other path (every rule, Unicode case folding).
        "non_ascii_authorization": _repeat(" ", "\u00e9 authorization:"),
        "non_ascii_password": _repeat("pa\u017f\u017fword="),
        "non_ascii_eyJ": _repeat("eyJ-", "\u00e9"),
        "non_ascii_bearer": _repeat("Bearer \u00e9 "),
    }
)
# Every rule's own trigger words, repeated, and followed by runs of what its body accepts.
for _rule in RULES:
    for _word in _rule.triggers:
        ADVERSARIAL[f"{_rule.name}:{_word}*"] = _repeat(_word + " ")
        ADVERSARIAL[f"{_rule.name}:{_word}=a*"] = _repeat("a", _word + "=")

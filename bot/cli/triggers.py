"""`relaybot triggers`: list the webhooks that start turns, and send one a signed test delivery."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from bot.cli.gateway_client import ask_gateway
from bot.cli.options import load

if TYPE_CHECKING:
    from bot.config.schema import Config
    from bot.config.schema_triggers import TriggerConfig

app = typer.Typer(help="Webhooks that start a turn (POST /hooks/<name>).", no_args_is_help=True)

POST_TIMEOUT = 30.0


@app.command("list")
def triggers_list(ctx: typer.Context) -> None:
    """Every trigger: name, path, target, and its last delivery with the outcome."""
    from bot.app.backend import deliveries_for

    config = load(ctx.obj)
    if not config.triggers:
        typer.echo("No triggers. Add one under `triggers:` in the config.")
        return
    book = deliveries_for(config)
    try:
        for trigger in config.triggers:
            last = book.last(trigger.name)
            shown = "never"
            if last is not None:
                at = datetime.fromtimestamp(last.accepted_at / 1000).astimezone()
                shown = f"{at:%Y-%m-%d %H:%M:%S %Z} {last.event or '-'} {last.outcome}"
            agent = f" agent {trigger.agent}" if trigger.agent else ""
            typer.echo(
                f"{trigger.name}  POST /hooks/{trigger.name}  to {trigger.chat} ({trigger.session} session{agent}, "
                f"{trigger.trust.value})  last: {shown}"
            )
    finally:
        book.close()


@app.command("test")
def triggers_test(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The trigger's name."),
    payload: Path = typer.Option(..., "--payload", exists=True, dir_okay=False, help="The JSON body to send."),
    event: str | None = typer.Option(None, "--event", help="The event header's value, e.g. pull_request."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the run's end and print the reply."),
    timeout: float = typer.Option(120.0, "--timeout", min=1, max=600, help="Seconds --wait waits."),
) -> None:
    """Sign FILE with the trigger's secret, post it to the running gateway, and print the run id."""
    config = load(ctx.obj)
    trigger = next((t for t in config.triggers if t.name == name), None)
    if trigger is None:
        known = ", ".join(t.name for t in config.triggers) or "none"
        raise typer.BadParameter(f"no trigger {name!r} (triggers: {known})", param_hint="NAME")
    status, answer = _post(config, trigger, payload.read_bytes(), event)
    if status >= 400 or not isinstance(answer, dict):
        typer.echo(f"error: the gateway answered {status}: {answer}", err=True)
        raise typer.Exit(1)
    run_id = answer.get("runId")
    if run_id is None:
        typer.echo(f"answered {status}, no run: {answer}")
        return
    typer.echo(f"run {run_id}" + (" (a delivery seen before; nothing new started)" if answer.get("duplicate") else ""))
    if wait:
        ended = ask_gateway(config, {"op": "triggers.wait", "runId": run_id, "timeout": timeout}, timeout + 10)
        if ended is None or not ended.get("ok"):
            typer.echo("error: the gateway does not answer on its control socket", err=True)
            raise typer.Exit(1)
        if ended["status"] == "timeout":
            typer.echo(f"error: no end within {timeout:.0f}s; the run goes on", err=True)
            raise typer.Exit(1)
        typer.echo(f"outcome: {ended['outcome']}")
        if ended["reply"]:
            typer.echo(ended["reply"])


def hook_url(config: Config, name: str) -> str:
    """Where the running gateway serves trigger `name`: the API channel's address, else the health listener's."""
    if config.channels.api.enabled:
        host, port = config.channels.api.host, config.channels.api.port
    elif config.health.port is not None:
        host, port = config.health.host, config.health.port
    else:
        raise typer.BadParameter("triggers are served on the gateway's HTTP server: enable channels.api or health.port")
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://{host}:{port}/hooks/{name}"


def _post(config: Config, trigger: TriggerConfig, body: bytes, event: str | None) -> tuple[int, Any]:
    """POST the signed body with a fresh delivery id; the status and the JSON answer (or its text)."""
    import json
    import urllib.error
    import urllib.request
    import uuid

    from bot.triggers.verification import signing_headers

    headers = {
        "Content-Type": "application/json",
        "User-Agent": "relaybot-triggers-test",
        **signing_headers(trigger, body),
    }
    if event is not None:
        headers[trigger.event_header] = event
    source, _, header = trigger.delivery_id.partition(":")
    if source == "header":
        headers[header] = f"test-{uuid.uuid4()}"
    request = urllib.request.Request(hook_url(config, trigger.name), data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=POST_TIMEOUT) as response:  # noqa: S310 (the gateway's own URL)
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode()
    except OSError as exc:
        typer.echo(f"error: the gateway is not reachable at {request.full_url}: {exc}", err=True)
        raise typer.Exit(1) from None
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text
